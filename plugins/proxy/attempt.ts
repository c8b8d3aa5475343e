// One upstream attempt: send, wait for the response headers (bounded), and for a 200 stream hold its opening frames
// until its first content, so an error before any content can still move the request to another account.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import { SseParser } from '../../adapters/shared/sse.ts';
import { keepScratch, scratchCtx } from '../../core/context.ts';
import type { Ctx, FormatAdapter, FrameVerdict, SseFrame, StreamScanner } from '../../core/types.ts';
import type { Failure } from './classify.ts';
import type { Chunked } from './upstream-request.ts';
import { UpstreamResponse, errorCode, requestHeaders, upstreamAgent } from './upstream-response.ts';

export interface AttemptOptions { header_timeout_ms: number; connect_timeout_ms: number; max_sockets: number; first_content_ms: number }

/** An upstream URL, parsed once, with the path (and query) a request to it names. */
export interface Target { url: URL; path: string }

export type Sent =
  | { kind: 'response'; upstream: UpstreamResponse }
  | { kind: 'failure'; failure: Failure; code?: string }
  | { kind: 'disconnected' };

/**
 * One send: settles once, with the first of the response headers, a failure, the header timeout or the client leaving
 * (which hangs up on the upstream request too).
 */
class Sending {
  readonly #upstream: UpstreamResponse;
  readonly #res: ServerResponse;
  readonly #resolve: (sent: Sent) => void;
  readonly #timer: NodeJS.Timeout;
  readonly #onClose = () => { if (this.settle({ kind: 'disconnected' })) this.hangUp(); };
  #answered = false;

  constructor(upstream: UpstreamResponse, res: ServerResponse, timeoutMs: number, resolve: (sent: Sent) => void) {
    this.#upstream = upstream;
    this.#res = res;
    this.#resolve = resolve;
    this.#timer = setTimeout(timedOut, timeoutMs, this);
    res.once('close', this.#onClose);
  }

  /** True for the first ending only. */
  settle(sent: Sent): boolean {
    if (this.#answered) return false;
    this.#answered = true;
    clearTimeout(this.#timer);
    this.#res.off('close', this.#onClose);
    this.#resolve(sent);
    return true;
  }

  /** Aborts the request (before its answer: undici's abort; after, the response's destroy does it). */
  hangUp(): void { this.#upstream.destroy(); }
}

function timedOut(sending: Sending): void {
  if (sending.settle({ kind: 'failure', failure: { kind: 'timeout' } })) sending.hangUp();
}

export class Upstreams {
  readonly #o: AttemptOptions;
  readonly #targets = new Map<string, Target>();
  #agent: UndiciAgent | undefined;

  constructor(options: AttemptOptions) {
    this.#o = options;
  }

  /** undici's dispatcher of every upstream origin (upstream-response.ts), made on first use: relayed requests and checks. */
  #dispatcher(): UndiciAgent {
    return (this.#agent ??= upstreamAgent({ connectTimeoutMs: this.#o.connect_timeout_ms, maxSockets: this.#o.max_sockets }));
  }

  /** The parsed upstream URL, kept per URL: parsing the same few targets for every request is wasted work. */
  target(href: string): Target {
    let target = this.#targets.get(href);
    if (!target) {
      if (this.#targets.size >= 1000) this.#targets.clear(); // query strings and path parameters make the set open-ended
      const url = new URL(href);
      this.#targets.set(href, target = { url, path: url.pathname + url.search });
    }
    return target;
  }

  /**
   * Send the request with these headers (the upstream's own set: the Host is the target's) and wait for the response
   * headers. The body is always in hand (bytes, or chunks made from bytes): a retry cannot re-read the client's request stream.
   */
  send(ctx: Ctx, target: Target, headers: IncomingHttpHeaders, body: Buffer | Chunked | undefined): Promise<Sent> {
    return new Promise<Sent>((resolve) => {
      const upstream = new UpstreamResponse();
      const sending = new Sending(upstream, ctx.res, this.#o.header_timeout_ms, resolve);
      const handler = upstream.handler(
        (res) => { if (!sending.settle({ kind: 'response', upstream: res })) res.destroy(); },
        // An error because the client went away is not the account's fault.
        (err) => { sending.settle(ctx.res.destroyed ? { kind: 'disconnected' } : { kind: 'failure', failure: { kind: 'connect' }, code: errorCode(err) }); },
      );
      this.#dispatch(target, (ctx.req.method ?? 'GET') as Dispatcher.HttpMethod, headers, body, handler);
    });
  }

  /** Hands the request to undici; an error it throws at once (a bad header) reaches the handler as any failure does. */
  #dispatch(target: Target, method: Dispatcher.HttpMethod, headers: IncomingHttpHeaders, body: Buffer | Chunked | undefined, handler: Dispatcher.DispatchHandlers): void {
    // Made a chunk at a time as the socket drains, anew for each attempt.
    const sent = body === undefined || Buffer.isBuffer(body) ? body ?? null : Readable.from(body.chunks(), { objectMode: false });
    try {
      this.#dispatcher().dispatch({ origin: target.url.origin, path: target.path, method, headers: requestHeaders(headers), body: sent }, handler);
    } catch (err) {
      handler.onError!(err as Error);
    }
  }

  /**
   * The status of a GET of `target` with only `headers` (the credential check), or undefined when none came within
   * `timeoutMs`. Its body is not read: the connection closes, which a check (at most one per account in 30 s) can afford.
   */
  status(target: Target, headers: Record<string, string>, timeoutMs: number): Promise<number | undefined> {
    return new Promise((resolve) => {
      const upstream = new UpstreamResponse();
      const timer = setTimeout(() => { upstream.destroy(); resolve(undefined); }, timeoutMs);
      const done = (status: number | undefined) => { clearTimeout(timer); resolve(status); };
      this.#dispatch(target, 'GET', headers, undefined, upstream.handler((res) => { done(res.statusCode); res.destroy(); }, () => done(undefined)));
    });
  }
}

/** A held stream's opening, read once: the relay goes on from its frame reader, its frames and its scanner. */
export interface Opening {
  /** The frame reader that read the bytes, a partial frame (or character) of their end still in it. */
  parser: SseParser;
  bytes: Buffer;
  frames: SseFrame[];
  /** What the scanner made of each frame: a native stream's frames as they go out (its scanner is the request's). */
  verdicts: FrameVerdict[];
  scanner: StreamScanner;
}

export type Held = { kind: 'commit'; opening?: Opening } | { kind: 'failure'; failure: Failure } | { kind: 'disconnected' };

/**
 * The upstream response's ways of ending (before the first content, each a failure of the attempt). Its 'close' comes
 * after its 'end' too, and is listened for instead, as the relays do: one listener hears either ending.
 */
const ENDINGS = ['aborted', 'error', 'close'] as const;

/**
 * Read a 200 SSE stream's opening frames until the scanner says content started, the stream ended its answer, or
 * `waitMs` passed: then commit, handing what was read to the relay (the stream paused, the bytes not yet relayed). An
 * error event (or the end of the stream) before any content is a failure, and nothing has reached the client.
 */
export function holdFirstContent(ctx: Ctx, upstream: UpstreamResponse, waitMs: number, format: FormatAdapter = ctx.format): Promise<Held> {
  if (waitMs <= 0) return Promise.resolve({ kind: 'commit' });
  // A scratch context: a failed attempt leaves nothing its scanner set (a stream position) behind for the next one.
  const scratch = scratchCtx(ctx);
  const scanner = format.scanStream(scratch);
  if (!scanner.started) return Promise.resolve({ kind: 'commit' });
  const parser = new SseParser();
  const held: Buffer[] = [];
  const frames: SseFrame[] = [];
  const verdicts: FrameVerdict[] = [];
  return new Promise<Held>((resolve) => {
    let decided = false;
    const decide = (result: Held) => {
      if (decided) return;
      decided = true;
      clearTimeout(timer);
      upstream.off('data', onData);
      for (const event of ENDINGS) upstream.off(event, onEnd);
      ctx.res.off('close', onClose);
      if (result.kind === 'commit') {
        upstream.pause();
        keepScratch(scratch);
        const bytes = held.length === 1 ? held[0] : Buffer.concat(held);
        // Back in front of the stream, which so ends only after them, as the relay reads on (a native one's pipe too).
        if (bytes.length) upstream.unshift(bytes);
        result.opening = { parser, bytes, frames, verdicts, scanner };
      } else upstream.destroy();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      held.push(chunk);
      // Every frame of the chunk is read: those after the one that decides are the relay's too.
      let commit = false;
      for (const frame of parser.push(chunk)) {
        frames.push(frame);
        verdicts.push(scanner.frame(frame));
        if (commit) continue;
        const error = scanner.error();
        if (error !== undefined && !scanner.started!()) return decide({ kind: 'failure', failure: { kind: 'stream_error', message: error } });
        commit = scanner.started!() || scanner.terminal();
      }
      if (commit) decide({ kind: 'commit' });
    };
    const onEnd = () => decide({ kind: 'failure', failure: { kind: 'stream_error', message: 'the stream ended before any content' } });
    const onClose = () => decide({ kind: 'disconnected' });
    const timer = setTimeout(() => decide({ kind: 'commit' }), waitMs);
    upstream.on('data', onData);
    for (const event of ENDINGS) upstream.once(event, onEnd);
    ctx.res.once('close', onClose);
  });
}

/** The message of an upstream error body in any of the three envelopes (all put it at error.message), for a stream error. */
export function errorMessage(text: string): string | undefined {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof json.error === 'string' ? json.error : json.error?.message ?? json.message;
    return typeof m === 'string' ? m : undefined;
  } catch { return undefined; }
}

/** Largest upstream error body read (its message is all that is used). */
export const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * The one collector of an upstream body: resolves with what arrived (at most `limit` bytes kept) once it ended, or was
 * cut (error, abort, close). It reads alongside any other listener (a relay that pipes the same body).
 */
export function readAll(upstream: UpstreamResponse, limit = Infinity): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    upstream.on('data', (c: Buffer) => { size += c.length; if (size <= limit) chunks.push(c); });
    const done = () => resolve(Buffer.concat(chunks));
    for (const event of ENDINGS) upstream.once(event, done);
  });
}

export const isSse = (headers: IncomingHttpHeaders): boolean => String(headers['content-type'] ?? '').includes('text/event-stream');
