// The process logger: pino JSON lines with an ISO-8601 time; secrets are redacted by path as a second line of defence.
import { pino, type DestinationStream, type Logger } from 'pino';
import { TurnWriter } from './log-stream.ts';

let second = NaN;
let head = '';
/**
 * pino's `"time"` field in ISO-8601 UTC, as `new Date().toISOString()` writes it, with the date and time up to the
 * second formatted once per second (pino's own isoTime builds a Date and its string on every line).
 */
export function isoTime(now = Date.now()): string {
  const s = Math.floor(now / 1000);
  if (s !== second) {
    second = s;
    head = new Date(s * 1000).toISOString().slice(0, 20); // "2026-11-27T11:09:00."
  }
  const ms = now - s * 1000;
  return `,"time":"${head}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

/** The process's stdout as its loggers write it (log-stream.ts), made by the first logger that writes there. */
let stdout: TurnWriter | undefined;

/** `destination` defaults to stdout (one write a turn: log-stream.ts); tests pass a sink to read the lines the gateway writes. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: undefined,
    timestamp: isoTime,
    // Levels by name ("info", not 30): what a person and a log search read; pino makes each level's text once.
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: ['headers.authorization', 'headers["x-api-key"]', 'headers["x-goog-api-key"]', 'credential', 'key', 'secret'], censor: '[redacted]' },
  };
  // process.stdout's fd: reading it opens stdout as node does (a pipe then non-blocking: a full one refuses a write).
  return pino(options, destination ?? (stdout ??= new TurnWriter(process.stdout.fd ?? 1)));
}

type Fast = Logger & { [k: symbol]: unknown };
const S = pino.symbols;

/**
 * Writes an info line made of `record` (plain data: no error objects, no field a redact path names) with one
 * JSON.stringify, straight to the logger's destination: the line pino would write (level, time, the logger's bindings,
 * the record's fields, msg), without its field-by-field serialisation and redaction pass. The one line per request
 * goes this way. A destination that wants pino's metadata (a multistream) gets the line through pino itself.
 */
export function infoLine(log: Logger, record: object, msg: string): void {
  if (!log.isLevelEnabled('info')) return;
  const l = log as Fast;
  const stream = l[S.streamSym] as { write(line: string): unknown; [k: symbol]: unknown };
  if (stream[S.needsMetadataGsym]) { log.info(record, msg); return; }
  const fields = JSON.stringify(record);
  const time = (l[S.timeSym] as () => string)();
  stream.write(`{"level":"info"${time}${l[S.chindingsSym] as string}${fields.length > 2 ? ',' + fields.slice(1, -1) : ''},"msg":${JSON.stringify(msg)}}\n`);
}
