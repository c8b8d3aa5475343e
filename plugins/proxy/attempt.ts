// One upstream attempt: send, wait for the response headers (bounded), and for a 200 stream hold its opening frames
// until its first content, so an error before any content can still move the request to another account.
import {
  Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { SseParser } from '../../adapters/shared/sse.ts';
import type { ContextVar, Ctx, FormatAdapter } from '../../core/types.ts';
import type { Failure } from './classify.ts';

export interface AttemptOptions { header_timeout_ms: number; connect_timeout_ms: number; max_sockets: number; first_content_ms: number }

/**
 * An upstream URL, parsed once, with the keep-alive agent of its origin and what a request to it is made of: the
 * address (an IPv6 literal without its brackets), the path with its query, and the Host header (port only when not
 * the scheme's default, as the URL's own `host` has it).
 */
export interface Target { url: URL; agent: HttpAgent; hostname: string; port: number; path: string }

export type Sent =
  | { kind: 'response'; upstream: IncomingMessage }
  | { kind: 'failure'; failure: Failure; code?: string }
  | { kind: 'disconnected' };

/**
 * One send: settles once, with the first of the response headers, a failure, the header timeout or the client leaving
 * (which hangs up on the upstream request too).
 */
class Sending {
  readonly #upstreamReq: ClientRequest;
  readonly #res: ServerResponse;
  readonly #resolve: (sent: Sent) => void;
  readonly #timer: NodeJS.Timeout;
  readonly #onClose = () => { if (this.settle({ kind: 'disconnected' })) this.#upstreamReq.destroy(); };
  #answered = false;

  constructor(upstreamReq: ClientRequest, res: ServerResponse, timeoutMs: number, resolve: (sent: Sent) => void) {
    this.#upstreamReq = upstreamReq;
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

  hangUp(): void { this.#upstreamReq.destroy(); }
}

function timedOut(sending: Sending): void {
  if (sending.settle({ kind: 'failure', failure: { kind: 'timeout' } })) sending.hangUp();
}

/** A connection still being made when its request is sent gets `ms` to connect, then fails as ECONNECT_TIMEOUT. */
export function connectWithin(socket: Socket, ms: number): void {
  if (!socket.connecting) return;
  const timer = setTimeout(() => {
    done();
    socket.destroy(Object.assign(new Error('ECONNECT_TIMEOUT'), { code: 'ECONNECT_TIMEOUT' }));
  }, ms).unref();
  const done = () => {
    clearTimeout(timer);
    socket.off('connect', done).off('error', done).off('close', done);
  };
  socket.once('connect', done).once('error', done).once('close', done);
}

/**
 * The headers as the flat [name, value, …] list node:http writes as it is (each still checked) instead of storing them
 * one setHeader at a time; the Host is the target's.
 */
function headerList(headers: IncomingHttpHeaders, host: string): string[] {
  const list: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name === 'host') continue;
    if (typeof value === 'string') list.push(name, value);
    else for (const one of value) list.push(name, one); // one line each, as node writes a list
  }
  list.push('host', host);
  return list;
}

export class Upstreams {
  readonly #o: AttemptOptions;
  readonly #agents = new Map<string, HttpAgent>();
  readonly #targets = new Map<string, Target>();

  constructor(options: AttemptOptions) {
    this.#o = options;
  }

  #agentFor(url: URL): HttpAgent {
    let agent = this.#agents.get(url.origin);
    if (!agent) {
      const opts = { keepAlive: true, maxSockets: this.#o.max_sockets > 0 ? this.#o.max_sockets : Infinity, maxFreeSockets: 256 };
      this.#agents.set(url.origin, agent = url.protocol === 'https:' ? new HttpsAgent(opts) : new HttpAgent(opts));
    }
    return agent;
  }

  /** The parsed upstream URL and its agent, kept per URL: parsing the same few targets for every request is wasted work. */
  target(href: string): Target {
    let target = this.#targets.get(href);
    if (!target) {
      if (this.#targets.size >= 1000) this.#targets.clear(); // query strings and path parameters make the set open-ended
      const url = new URL(href);
      const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      this.#targets.set(href, target = { url, agent: this.#agentFor(url), hostname, port, path: url.pathname + url.search });
    }
    return target;
  }

  /**
   * Send the request with these headers (the upstream's own set: the Host is the target's) and wait for the response
   * headers. The body is always bytes in hand: a retry cannot re-read the client's request stream.
   */
  send(ctx: Ctx, target: Target, headers: IncomingHttpHeaders, body: Buffer | undefined): Promise<Sent> {
    return new Promise<Sent>((resolve) => {
      const upstreamReq = (target.url.protocol === 'https:' ? httpsRequest : httpRequest)({
        hostname: target.hostname, port: target.port, path: target.path, method: ctx.req.method, agent: target.agent,
        headers: headerList(headers, target.url.host),
      });
      const sending = new Sending(upstreamReq, ctx.res, this.#o.header_timeout_ms, resolve);
      upstreamReq.once('response', (upstream: IncomingMessage) => { if (!sending.settle({ kind: 'response', upstream })) upstream.destroy(); });
      // An error because the client went away is not the account's fault.
      upstreamReq.on('error', (err: NodeJS.ErrnoException) => {
        sending.settle(ctx.res.destroyed ? { kind: 'disconnected' } : { kind: 'failure', failure: { kind: 'connect' }, code: err.code });
      });
      if (this.#o.connect_timeout_ms > 0) upstreamReq.once('socket', (socket: Socket) => connectWithin(socket, this.#o.connect_timeout_ms));
      upstreamReq.end(body);
    });
  }
}

/**
 * The request's context as a throwaway scanner sees it: what it sets stays in a map of its own, so an attempt that
 * fails before its first content leaves no state (a stream position, an id) behind for the next one.
 */
function scratchOf(ctx: Ctx): Ctx {
  const own = new Map<string, unknown>();
  return Object.create(ctx, {
    get: { value: <T>(v: ContextVar<T>) => (own.has(v.name) ? own.get(v.name) : ctx.get(v)) as T | undefined },
    set: { value: <T>(v: ContextVar<T>, value: T | undefined) => { own.set(v.name, value); } },
  }) as Ctx;
}

export type Held = { kind: 'commit' } | { kind: 'failure'; failure: Failure } | { kind: 'disconnected' };

/**
 * The upstream response's ways of ending (before the first content, each a failure of the attempt). Its 'close' comes
 * after its 'end' too, and is listened for instead: a listener of ours beside node's own on 'end' makes a listener
 * array that V8 may allocate in the old generation, keeping the request alive past minor GCs (relay.ts, relayBody).
 */
const ENDINGS = ['aborted', 'error', 'close'] as const;

/**
 * Read a 200 SSE stream's opening frames through a throwaway scanner until it says content started, the stream ended
 * its answer, or `waitMs` passed: then put the bytes back for the relay (commit). An error event (or the end of the
 * stream) before any content is a failure, and nothing has reached the client.
 */
export function holdFirstContent(ctx: Ctx, upstream: IncomingMessage, waitMs: number, format: FormatAdapter = ctx.format): Promise<Held> {
  const probe = format.scanStream(scratchOf(ctx));
  if (!probe.started || waitMs <= 0) return Promise.resolve({ kind: 'commit' });
  const parser = new SseParser();
  const held: Buffer[] = [];
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
        if (held.length) upstream.unshift(held.length === 1 ? held[0] : Buffer.concat(held));
      } else upstream.destroy();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      held.push(chunk);
      for (const frame of parser.push(chunk)) {
        probe.frame(frame);
        const error = probe.error();
        if (error !== undefined && !probe.started!()) return decide({ kind: 'failure', failure: { kind: 'stream_error', message: error } });
        if (probe.started!() || probe.terminal()) return decide({ kind: 'commit' });
      }
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
export function readAll(upstream: IncomingMessage, limit = Infinity): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    upstream.on('data', (c: Buffer) => { size += c.length; if (size <= limit) chunks.push(c); });
    const done = () => resolve(Buffer.concat(chunks));
    for (const event of ENDINGS) upstream.once(event, done);
  });
}

export const isSse = (headers: IncomingHttpHeaders): boolean => String(headers['content-type'] ?? '').includes('text/event-stream');
