// The upstream hop on undici's HTTP/1.1 client, its response presented to the relays as node's IncomingMessage is.
// undici's dispatcher, read straight from its handler callbacks, does the exchange for less CPU than node:http's client
// (docs/performance.md). What the relays read stays as it was: a Readable of the body with statusCode, headers
// (duplicates joined by node's own rules), complete, 'aborted' when the body is cut, and an 'error' only for a reader
// that listens for one (IncomingMessage's rule). A relay that wants the whole body (a JSON answer) takes it with
// whole(), past the stream's machinery (its events and ticks per request).
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
// undici's Agent alone: its index also loads fetch, WebSocket, caches, mocks and the rest, which stay resident in the
// heap of every process. The credential check's GET goes through dispatch too (attempt.ts).
import UndiciAgent from 'undici/lib/dispatcher/agent.js';

/** An upstream response: what the relays, the failover and the stream probe read. */
export class UpstreamResponse extends Readable {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  /** The whole body arrived (IncomingMessage.complete). */
  complete = false;
  #abort: ((err: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  /** undici stopped reading (the reader is behind): _read lets it go on. */
  #paused = false;
  /**
   * The body's chunks as undici gave them, until a reader takes them: the first read pushes them into the stream, or
   * whole() takes them all at once, without the stream's machinery (its events, its ticks, its buffer).
   */
  #held: Buffer[] | undefined;
  /** Their size: past the stream's high-water mark undici waits for a reader, as it waits for a slow one. */
  #heldBytes = 0;
  /** Read as a stream (#held went into it): from then on undici's chunks are pushed as they come. */
  #reading = false;
  /** Taken by whole(): the stream is never read. */
  #taken = false;
  #whole: ((body: Buffer | undefined) => void) | undefined;
  /** whole()'s limit: past it, chunks are counted but not kept (as readAll's). */
  #limit = Infinity;

  /**
   * The whole body, to `done` once it is complete (undefined when it was cut: an error, an abort, a destroy), without
   * reading this as a stream; false, and nothing taken, when it is read as a stream already (or about to be: flowing).
   * Past `limit` bytes the rest is not kept (the chunk that crosses it neither), as readAll (attempt.ts) does.
   */
  whole(done: (body: Buffer | undefined) => void, limit = Infinity): boolean {
    if (this.#reading || this.#taken || this.readableFlowing !== null || this.destroyed) return false;
    this.#taken = true;
    this.#whole = done;
    this.#limit = limit;
    if (this.complete) this.#deliver();
    else this.#goOn();
    return true;
  }

  /** undici reads on, if it was waiting for a reader. */
  #goOn(): void {
    if (!this.#paused) return;
    this.#paused = false;
    // Never from inside a parser's callback: undici resumes a parser only between reads of its socket.
    if (this.#resume) process.nextTick(this.#resume);
  }

  #deliver(): void {
    const done = this.#whole!;
    const held = this.#held;
    this.#whole = this.#held = undefined;
    done(!held ? Buffer.alloc(0) : held.length === 1 ? held[0] : Buffer.concat(held));
  }

  override _read(): void {
    if (this.#taken) return;
    if (!this.#reading) {
      this.#reading = true;
      const held = this.#held;
      this.#held = undefined;
      this.#heldBytes = 0;
      if (held) for (const chunk of held) this.push(chunk);
      if (this.complete) {
        this.push(null);
        return;
      }
    }
    this.#goOn();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.complete) {
      this.emit('aborted');
      this.#abort?.(err ?? new Error('aborted'));
      const whole = this.#whole;
      this.#whole = this.#held = undefined;
      whole?.(undefined);
    }
    // As IncomingMessage: an error is emitted only to a reader listening for one.
    cb(this.listenerCount('error') ? err : null);
  }

  /** undici's handler of this response's request. */
  handler(started: (res: UpstreamResponse) => void, failed: (err: Error & { code?: string }) => void): Dispatcher.DispatchHandlers {
    return {
      // A request hung up on while it waited for a connection is aborted as soon as it gets one.
      onConnect: (abort) => {
        if (this.destroyed) abort(new Error('aborted'));
        else this.#abort = abort;
      },
      onHeaders: (status, raw, resume) => {
        // An informational answer (103 Early Hints) precedes the response; node's client skipped them too.
        if (status < 200) return true;
        this.statusCode = status;
        this.headers = nodeHeaders(raw as unknown as Buffer[]);
        this.#resume = resume;
        started(this);
        return true;
      },
      // false: undici waits for resume (_read) before it reads on. Before a reader, the chunks are held (a whole
      // answer arrives with its headers, mostly in the same read of the socket).
      onData: (chunk) => {
        if (!this.#reading) {
          this.#heldBytes += chunk.length;
          if (!this.#taken || this.#heldBytes <= this.#limit) (this.#held ??= []).push(chunk);
          if (this.#taken || this.#heldBytes < this.readableHighWaterMark) return true;
          this.#paused = true;
          return false;
        }
        if (this.push(chunk)) return true;
        this.#paused = true;
        return false;
      },
      onComplete: () => {
        this.complete = true;
        if (this.#whole) this.#deliver();
        else if (this.#reading) this.push(null);
      },
      onError: (err) => {
        if (this.statusCode === 0) failed(err as Error & { code?: string });
        else if (!this.destroyed) this.destroy(err);
      },
    };
  }
}

/**
 * Header lines as node's IncomingMessage joins them (its matchKnownFields): these keep their first value, set-cookie is
 * a list, cookie is joined with '; ', any other repeated header with ', '.
 */
const FIRST_ONLY = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since',
  'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after',
  'server', 'user-agent',
]);

export function nodeHeaders(raw: Buffer[]): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    const had = headers[name];
    if (name === 'set-cookie') {
      if (had) (had as string[]).push(value);
      else headers[name] = [value];
    } else if (had === undefined) headers[name] = value;
    else if (FIRST_ONLY.has(name)) continue;
    else headers[name] = `${had}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return headers;
}

/**
 * Request headers undici will not send as given: hop-by-hop ones (this hop's own: never the client's), the Host (the
 * origin's) and the length (the body's own).
 */
const NOT_SENT = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'expect', 'host', 'content-length', 'te', 'trailer']);

/** The headers as undici's flat [name, value, …] list, one line per value. */
export function requestHeaders(headers: IncomingHttpHeaders): string[] {
  const list: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || NOT_SENT.has(name)) continue;
    if (typeof value === 'string') list.push(name, value);
    else for (const one of value) list.push(name, one);
  }
  return list;
}

/** undici's error codes as node:http's client names the same failures (logs and tests read them). */
const CODES: Record<string, string> = { UND_ERR_CONNECT_TIMEOUT: 'ECONNECT_TIMEOUT', UND_ERR_SOCKET: 'ECONNRESET' };
export const errorCode = (err: { code?: string }): string | undefined => (err.code && CODES[err.code]) ?? err.code;

export interface UpstreamClientOptions { connectTimeoutMs: number; maxSockets: number }

/**
 * The dispatcher of every upstream origin: keep-alive connections per origin, at most `maxSockets` each (0: no limit).
 * An idle connection is kept 30 s, or as long as the upstream's Keep-Alive header says (undici's default of 4 s would
 * make a request after a short lull pay a new connection, TLS included).
 */
export function upstreamAgent(o: UpstreamClientOptions): Agent {
  return new UndiciAgent({
    connections: o.maxSockets > 0 ? o.maxSockets : null,
    keepAliveTimeout: 30_000,
    // The attempt bounds the wait for headers itself; a body is as long as the model takes.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: o.connectTimeoutMs },
  });
}
