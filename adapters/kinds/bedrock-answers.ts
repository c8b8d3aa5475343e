// Bedrock's answers made Anthropic's: the stream's AWS event-stream messages (each `chunk` event carrying one base64
// Anthropic event, an exception message ending it) into Anthropic SSE frames, with the invocation metrics as the usage
// where the events lack it; an error body ({"message"} with x-amzn-errortype) into Anthropic's error envelope.
import type { IncomingHttpHeaders } from 'node:http';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { AnswerDecoder } from '../../core/types.ts';

/** Bedrock's exception names (x-amzn-errortype, an event-stream :exception-type), lower-cased, as Anthropic error types. */
const ERROR_TYPES: Record<string, string> = {
  throttlingexception: 'rate_limit_error',
  servicequotaexceededexception: 'rate_limit_error',
  modelnotreadyexception: 'overloaded_error',
  serviceunavailableexception: 'overloaded_error',
  validationexception: 'invalid_request_error',
  accessdeniedexception: 'permission_error',
  unrecognizedclientexception: 'authentication_error',
  invalidsignatureexception: 'authentication_error',
  expiredtokenexception: 'authentication_error',
  resourcenotfoundexception: 'not_found_error',
  modeltimeoutexception: 'timeout_error',
  modelerrorexception: 'api_error',
  modelstreamerrorexception: 'api_error',
  internalserverexception: 'api_error',
};

const BY_STATUS: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 408: 'timeout_error', 413: 'request_too_large', 429: 'rate_limit_error', 503: 'overloaded_error' };

/** The Anthropic error type of a Bedrock exception name ("ThrottlingException:http://internal.amazon.com/..." too). */
export function anthropicErrorType(exception: string | undefined, status?: number): string {
  const name = (exception ?? '').split(':')[0].trim().toLowerCase();
  return ERROR_TYPES[name] ?? (status !== undefined ? BY_STATUS[status] : undefined) ?? 'api_error';
}

const envelope = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } });
const frame = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`;
const header = (v: unknown) => (v && typeof v === 'object' && 'value' in v ? String((v as { value: unknown }).value) : undefined);

/** Largest error body read. */
const ERROR_LIMIT = 64 * 1024;

/** A Bedrock error body made Anthropic's envelope (its status stays). */
export class BedrockErrorBody implements AnswerDecoder {
  readonly contentType = 'application/json';
  readonly #status: number;
  readonly #exception: string | undefined;
  readonly #parts: Buffer[] = [];
  #size = 0;

  constructor(status: number, exception: string | undefined) {
    this.#status = status;
    this.#exception = exception;
  }

  push(chunk: Buffer): string {
    if ((this.#size += chunk.length) <= ERROR_LIMIT) this.#parts.push(chunk);
    return '';
  }

  end(): string {
    const text = Buffer.concat(this.#parts).toString('utf8');
    let message = text.slice(0, 2000) || `Bedrock answered ${this.#status}`;
    try {
      const json = JSON.parse(text) as Record<string, unknown>;
      const m = json.message ?? json.Message;
      if (typeof m === 'string') message = m;
      // Already Anthropic's (a model's own error passed through): kept as it is.
      if (json.type === 'error' && json.error && typeof json.error === 'object') return text;
    } catch { /* not JSON: its text is the message */ }
    return envelope(anthropicErrorType(this.#exception, this.#status), message);
  }
}

/** Event-stream prelude: total length (4), headers length (4), prelude CRC (4). */
const PRELUDE = 12;
/** A message larger than this is not Bedrock's (its chunks are small): the stream is refused as corrupt. */
const MAX_MESSAGE = 16 * 1024 * 1024;

/** Bedrock's invoke-with-response-stream body made Anthropic SSE. */
export class BedrockEventStream implements AnswerDecoder {
  readonly contentType = 'text/event-stream; charset=utf-8';
  readonly #codec = new EventStreamCodec(toUtf8, fromUtf8);
  #buffer: Buffer = Buffer.alloc(0);
  #input = false;
  #output = false;
  #stop: { stop_reason?: unknown; stop_sequence?: unknown } | undefined;
  #failed = false;

  push(chunk: Buffer): string {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk;
    let out = '';
    while (this.#buffer.length >= PRELUDE && !this.#failed) {
      const total = this.#buffer.readUInt32BE(0);
      if (total < PRELUDE + 4 || total > MAX_MESSAGE) throw new Error('the event stream is corrupt');
      if (this.#buffer.length < total) break;
      // decode checks both CRCs: a corrupt message throws, which cuts the stream (the relay's error event follows).
      const message = this.#codec.decode(this.#buffer.subarray(0, total));
      this.#buffer = this.#buffer.subarray(total);
      out += this.#message(message.headers as Record<string, unknown>, Buffer.from(message.body));
    }
    return out;
  }

  end(): string {
    if (this.#buffer.length && !this.#failed) throw new Error('the event stream ended inside a message');
    return '';
  }

  #message(headers: Record<string, unknown>, body: Buffer): string {
    const type = header(headers[':message-type']);
    if (type === 'exception' || type === 'error') {
      this.#failed = true;
      let message = header(headers[':error-message']) ?? body.toString('utf8');
      try { message = String((JSON.parse(body.toString('utf8')) as { message?: unknown }).message ?? message); } catch { /* text */ }
      return frame('error', envelope(anthropicErrorType(header(headers[':exception-type']) ?? header(headers[':error-code'])), message));
    }
    if (type !== 'event' || header(headers[':event-type']) !== 'chunk') return '';
    const bytes = (JSON.parse(body.toString('utf8')) as { bytes?: unknown }).bytes;
    if (typeof bytes !== 'string') return '';
    const text = Buffer.from(bytes, 'base64').toString('utf8');
    const event = JSON.parse(text) as Record<string, any>;
    const name = typeof event.type === 'string' ? event.type : 'message';
    if (name === 'message_start' && typeof event.message?.usage?.input_tokens === 'number') this.#input = true;
    if (name === 'message_delta') {
      if (typeof event.usage?.output_tokens === 'number') this.#output = true;
      this.#stop = event.delta;
    }
    if (name === 'message_stop') return this.#usageFromMetrics(event['amazon-bedrock-invocationMetrics']) + frame(name, text);
    return frame(name, text);
  }

  /** The invocation metrics as a message_delta's usage, when the events did not say the tokens themselves. */
  #usageFromMetrics(metrics: Record<string, unknown> | undefined): string {
    if (!metrics || (this.#input && this.#output)) return '';
    const usage = { input_tokens: Number(metrics.inputTokenCount) || 0, output_tokens: Number(metrics.outputTokenCount) || 0 };
    const delta = { stop_reason: this.#stop?.stop_reason ?? 'end_turn', stop_sequence: this.#stop?.stop_sequence ?? null };
    return frame('message_delta', JSON.stringify({ type: 'message_delta', delta, usage }));
  }
}

/** Bedrock's answer decoder: an error body, or a stream in event-stream framing; anything else is Anthropic's already. */
export function bedrockDecoder(status: number, headers: IncomingHttpHeaders): AnswerDecoder | undefined {
  const type = String(headers['content-type'] ?? '');
  if (status >= 400) return new BedrockErrorBody(status, [headers['x-amzn-errortype']].flat()[0]);
  if (type.includes('application/vnd.amazon.eventstream')) return new BedrockEventStream();
  return undefined;
}

/** Bedrock's count-tokens answer ({"inputTokens": n}) made Anthropic's ({"input_tokens": n}). */
export class BedrockCount implements AnswerDecoder {
  readonly contentType = 'application/json';
  readonly #parts: Buffer[] = [];
  push(chunk: Buffer): string { this.#parts.push(chunk); return ''; }
  end(): string {
    const json = JSON.parse(Buffer.concat(this.#parts).toString('utf8')) as { inputTokens?: unknown };
    return JSON.stringify({ input_tokens: Number(json.inputTokens) || 0 });
  }
}
