// The simulator playing kind `bedrock`: the runtime's paths (/model/{modelId}/invoke, /invoke-with-response-stream,
// /count-tokens; GET /async-invoke), SigV4 signatures verified by recomputing them with the secret of the access key
// (simulator_aws_keys), or a Bedrock API key as a bearer. A body naming `model` or `stream`, or without Bedrock's
// anthropic_version, is refused as Bedrock refuses it. The request is then served by the Anthropic routes, and their
// answer framed as Bedrock's: streams as AWS event-stream messages carrying base64 Anthropic events (the last with the
// invocation metrics), errors as {"message"} with x-amzn-errortype.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { parseAuthorization, sha256Hex, sigv4 } from '../adapters/shared/sigv4.ts';
import { BAD_CREDENTIAL } from './incoming.ts';

export const BEDROCK_VERSION = 'bedrock-2023-05-31';
/** The signature's date may be this far from the simulator's clock (AWS allows 5 minutes). */
const SKEW_MS = 5 * 60_000;

const ROUTE = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|count-tokens)$/;
const ERRORTYPE_SUFFIX = ':http://internal.amazon.com/coral/com.amazon.bedrock/';

/** Anthropic error types as Bedrock's exceptions and statuses. */
const EXCEPTIONS: Record<string, [number, string]> = {
  rate_limit_error: [429, 'ThrottlingException'],
  overloaded_error: [503, 'ServiceUnavailableException'],
  invalid_request_error: [400, 'ValidationException'],
  authentication_error: [403, 'UnrecognizedClientException'],
  permission_error: [403, 'AccessDeniedException'],
  not_found_error: [404, 'ResourceNotFoundException'],
  request_too_large: [413, 'ValidationException'],
  timeout_error: [408, 'ModelTimeoutException'],
  api_error: [500, 'InternalServerException'],
};

function errorParts(exception: string, message: string, headers: OutgoingHttpHeaders): { headers: OutgoingHttpHeaders; body: string } {
  const body = JSON.stringify({ message });
  return { body, headers: { ...headers, 'content-type': 'application/json', 'x-amzn-errortype': `${exception}${ERRORTYPE_SUFFIX}`, 'content-length': Buffer.byteLength(body) } };
}

export function bedrockError(res: ServerResponse, status: number, exception: string, message: string, headers: OutgoingHttpHeaders = {}): void {
  const e = errorParts(exception, message, headers);
  res.writeHead(status, e.headers);
  res.end(e.body);
}

const invalidToken = (res: ServerResponse) => bedrockError(res, 403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
const badSignature = (res: ServerResponse) => bedrockError(res, 403, 'InvalidSignatureException',
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.');

export interface BedrockRequest {
  /** The Anthropic route it plays. */
  path: string;
  /** The body as that route takes it (the model and the stream flag put back). */
  body: string;
  /** Who asked: the API key, or the secret access key (a `sim-fault:` secret carries faults, as an API key does). */
  credential: string;
  stream: boolean;
  count: boolean;
}

function pairs(query: URLSearchParams): string { return query.toString() ? `?${query.toString()}` : ''; }

export class BedrockSimulator {
  readonly #keys: Record<string, string>;
  /** Requests whose signature was verified (a test sees that signing happened). */
  verified = 0;

  constructor(keys: Record<string, string> = {}) { this.#keys = keys; }

  /** A Bedrock request checked and mapped onto the Anthropic route it plays, or undefined once it was answered. */
  async accept(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams, raw: Buffer): Promise<BedrockRequest | undefined> {
    const route = ROUTE.exec(path);
    const listing = method === 'GET' && path === '/async-invoke';
    if (!listing && (!route || method !== 'POST')) { bedrockError(res, 404, 'UnknownOperationException', 'Unknown operation'); return undefined; }
    const credential = await this.#authenticate(req, res, method, path + pairs(query), raw);
    if (credential === undefined) return undefined;
    if (listing) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ asyncInvokeSummaries: [] }));
      return undefined;
    }
    const model = decodeURIComponent(route![1]);
    const op = route![2];
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      if (op === 'count-tokens') json = JSON.parse(String((json.input as any)?.invokeModel?.body)) as Record<string, unknown>;
      if (!json || typeof json !== 'object' || Array.isArray(json)) throw new Error('not an object');
    } catch {
      bedrockError(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
      return undefined;
    }
    for (const field of ['model', 'stream']) {
      if (field in json) {
        bedrockError(res, 400, 'ValidationException', `Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`);
        return undefined;
      }
    }
    if (json.anthropic_version !== BEDROCK_VERSION) {
      bedrockError(res, 400, 'ValidationException', 'Malformed input request: #: required key [anthropic_version] not found or invalid, please reformat your input and try again.');
      return undefined;
    }
    const { anthropic_version: _v, anthropic_beta: beta, ...rest } = json;
    // Anthropic's routes take the beta flags Bedrock reads from the body as their header.
    if (Array.isArray(beta)) req.headers['anthropic-beta'] = beta.join(',');
    const stream = op === 'invoke-with-response-stream';
    const count = op === 'count-tokens';
    if (count) delete rest.max_tokens;
    // The Anthropic routes want their version header, which Bedrock takes in the body instead.
    req.headers['anthropic-version'] ??= '2023-06-01';
    return { path: count ? '/v1/messages/count_tokens' : '/v1/messages', body: JSON.stringify({ ...rest, model, ...(stream ? { stream: true } : {}) }), credential, stream, count };
  }

  /** The caller's credential once its API key or SigV4 signature holds, else undefined (answered with AWS's 403). */
  async #authenticate(req: IncomingMessage, res: ServerResponse, method: string, pathAndQuery: string, raw: Buffer): Promise<string | undefined> {
    const authorization = String(req.headers.authorization ?? '');
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
    if (bearer) {
      if (bearer === BAD_CREDENTIAL) { invalidToken(res); return undefined; }
      return bearer;
    }
    const auth = parseAuthorization(authorization);
    if (!auth) { bedrockError(res, 403, 'MissingAuthenticationTokenException', 'Missing Authentication Token'); return undefined; }
    const secret = this.#keys[auth.accessKeyId];
    if (secret === undefined || auth.service !== 'bedrock') { invalidToken(res); return undefined; }
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    const date = m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : undefined;
    if (!date || Math.abs(Date.now() - date.getTime()) > SKEW_MS || amzDate.slice(0, 8) !== auth.date) {
      bedrockError(res, 403, 'InvalidSignatureException', `Signature expired: ${amzDate} is now earlier or later than the allowed window.`);
      return undefined;
    }
    // The payload hash is the body's own: a body changed after signing no longer matches, whatever header came with it.
    const given = req.headers['x-amz-content-sha256'];
    if (given !== undefined && given !== sha256Hex(raw)) { badSignature(res); return undefined; }
    const headers: Record<string, string> = {};
    for (const name of auth.signedHeaders) {
      if (name === 'host' || name === 'x-amz-date' || name === 'x-amz-content-sha256' || name === 'x-amz-security-token') continue;
      const v = req.headers[name];
      if (v === undefined) { badSignature(res); return undefined; }
      headers[name] = Array.isArray(v) ? v.join(',') : v;
    }
    const token = req.headers['x-amz-security-token'];
    const url = new URL(`http://${req.headers.host}${pathAndQuery}`);
    const expected = await sigv4({ method, url, headers, body: raw, date }, { accessKeyId: auth.accessKeyId, secretAccessKey: secret, sessionToken: typeof token === 'string' ? token : undefined }, auth.region, 'bedrock');
    const ours = Buffer.from(expected.authorization ?? '');
    const theirs = Buffer.from(authorization.trim());
    if (ours.length !== theirs.length || !timingSafeEqual(ours, theirs)) { badSignature(res); return undefined; }
    this.verified++;
    return secret;
  }
}

/**
 * Frames what the Anthropic routes write as Bedrock answers it: an SSE stream as event-stream `chunk` messages (the
 * message_stop one with the invocation metrics, an error event as an exception message), an error as Bedrock's, a
 * token count as count-tokens answers it. The response's own methods are replaced for this one request.
 */
export function frameAsBedrock(res: ServerResponse, request: Pick<BedrockRequest, 'stream' | 'count'>): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: OutgoingHttpHeaders) => ServerResponse;
  const write = res.write.bind(res) as (chunk: unknown, cb?: () => void) => boolean;
  const end = res.end.bind(res) as (chunk?: unknown, cb?: () => void) => ServerResponse;
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const started = Date.now();
  let firstByte: number | undefined;
  let mode: 'pass' | 'events' | 'held' = 'pass';
  let status = 200;
  let held: OutgoingHttpHeaders = {};
  let text = '';
  const usage = { input: 0, output: 0 };

  const message = (headers: Record<string, string>, body: string): Buffer => Buffer.from(codec.encode({
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { type: 'string', value: v }])),
    body: fromUtf8(body),
  }));

  /** Complete SSE frames of `text` as event-stream messages; a partial frame waits. */
  const frames = (final: boolean): Buffer => {
    const out: Buffer[] = [];
    let at: number;
    while ((at = text.indexOf('\n\n')) >= 0 || (final && text.trim())) {
      const block = at >= 0 ? text.slice(0, at) : text;
      text = at >= 0 ? text.slice(at + 2) : '';
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (!data) continue;
      const event = JSON.parse(data) as Record<string, any>;
      if (event.type === 'error') {
        const [, exception] = EXCEPTIONS[event.error?.type] ?? EXCEPTIONS.api_error;
        const name = exception === 'InternalServerException' ? 'modelStreamErrorException' : exception[0].toLowerCase() + exception.slice(1);
        out.push(message({ ':message-type': 'exception', ':exception-type': name, ':content-type': 'application/json' }, JSON.stringify({ message: String(event.error?.message ?? 'error') })));
        continue;
      }
      if (event.type === 'message_start') usage.input = Number(event.message?.usage?.input_tokens) || 0;
      if (event.type === 'message_delta' && typeof event.usage?.output_tokens === 'number') usage.output = event.usage.output_tokens;
      if (event.type === 'ping') continue;
      firstByte ??= Date.now() - started;
      if (event.type === 'message_stop') {
        event['amazon-bedrock-invocationMetrics'] = { inputTokenCount: usage.input, outputTokenCount: usage.output, invocationLatency: Date.now() - started, firstByteLatency: firstByte };
      }
      const bytes = Buffer.from(JSON.stringify(event)).toString('base64');
      out.push(message({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ bytes })));
    }
    return Buffer.concat(out);
  };

  const asText = (chunk: unknown): string => (chunk === undefined || chunk === null ? '' : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));

  /** A held error or count, in Bedrock's shape. */
  const finishHeld = (): void => {
    let json: Record<string, any> = {};
    try { json = JSON.parse(text) as Record<string, any>; } catch { /* not JSON */ }
    if (status < 300 && request.count) {
      const body = JSON.stringify({ inputTokens: Number(json.input_tokens) || 0 });
      writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      end(body);
      return;
    }
    const [st, exception] = EXCEPTIONS[json.error?.type] ?? [status, status >= 500 ? 'InternalServerException' : 'ValidationException'];
    const keep: OutgoingHttpHeaders = {};
    for (const name of ['retry-after', 'retry-after-ms']) if (held[name] !== undefined) keep[name] = held[name];
    const e = errorParts(exception, String(json.error?.message ?? text), keep);
    writeHead(st, e.headers);
    end(e.body);
  };

  (res as any).writeHead = (st: number, headers: OutgoingHttpHeaders = {}) => {
    status = st;
    const type = String(headers['content-type'] ?? '');
    if (st >= 400 || request.count) { mode = 'held'; held = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])); return res; }
    if (request.stream && type.includes('text/event-stream')) {
      mode = 'events';
      return writeHead(st, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-bedrock-content-type': 'application/json' });
    }
    return writeHead(st, headers);
  };
  (res as any).write = (chunk: unknown, cb?: () => void) => {
    if (mode === 'pass') return write(chunk, cb);
    text += asText(chunk);
    if (mode === 'held') { cb?.(); return true; }
    const out = frames(false);
    if (out.length) return write(out, cb);
    cb?.();
    return true;
  };
  (res as any).end = (chunk?: unknown, cb?: () => void) => {
    if (mode === 'pass') return end(chunk, cb);
    if (typeof chunk !== 'function') text += asText(chunk);
    if (mode === 'held') { finishHeld(); return res; }
    const out = frames(true);
    return out.length ? end(out, cb) : end(cb);
  };
}
