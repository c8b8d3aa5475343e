// The process logger: pino JSON lines with an ISO-8601 time; secrets are redacted by path as a second line of defence.
import { pino, type DestinationStream, type Logger } from 'pino';

/** `destination` defaults to stdout; tests pass a sink to read the lines the gateway writes. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'credential', 'key'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
