// The process logger: pino JSON lines; secrets are redacted by path as a second line of defence.
import { pino, type Logger } from 'pino';

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: undefined,
    redact: { paths: ['headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'credential', 'key'], censor: '[redacted]' },
  });
}
