// Relays the upstream response to the client: SSE scanned frame by frame (usage, model names, keepalive), JSON read for usage.
import type { OutgoingHttpHeaders } from 'node:http';
import { headerMatcher } from '../../adapters/shared/headers.ts';
import { SseParser } from '../../adapters/shared/sse.ts';
import type { GatewayError } from '../../core/errors.ts';
import { pickJson } from '../../core/json-pick.ts';
import { readAll } from './attempt.ts';
import { proxyErrors } from './pool-errors.ts';
import type { Ctx, FormatAdapter, Outcome } from '../../core/types.ts';
import type { UpstreamResponse } from './upstream-response.ts';
import { drainWanted, UsageDrain, type DrainBounds } from './usage-drain.ts';

/** Each format's allow list of upstream response headers, compiled once. */
const returned = new WeakMap<FormatAdapter, (name: string) => boolean>();

/**
 * The upstream's response headers that reach the client: only what the format's allow list names. An account's
 * organization, project and rate-limit headers describe the operator's account, not the client's key.
 */
function clientHeaders(ctx: Ctx, upstream: UpstreamResponse): OutgoingHttpHeaders {
  let allowed = returned.get(ctx.format);
  if (!allowed) returned.set(ctx.format, allowed = headerMatcher(ctx.format.returnHeaders));
  const headers: OutgoingHttpHeaders = {};
  const given = upstream.headers;
  for (const name in given) {
    const value = given[name];
    if (value !== undefined && allowed(name)) headers[name] = value;
  }
  const upstreamId = upstream.headers['x-request-id'] ?? upstream.headers['request-id'];
  if (typeof upstreamId === 'string') headers['x-upstream-request-id'] = upstreamId;
  headers['x-request-id'] = ctx.id;
  headers['x-gateway-overhead-ms'] = overheadMs(ctx);
  return headers;
}

/**
 * The gateway's own time so far, in ms: everything before the (last) upstream attempt was sent, plus the time since
 * `since` (a whole answer: since the upstream finished it). The upstream's own time is not in it.
 */
export function overheadMs(ctx: Ctx, since?: number): string {
  const { start, upstreamStart = start } = ctx.timings;
  return (upstreamStart - start + (since === undefined ? 0 : performance.now() - since)).toFixed(1);
}

/**
 * Relay one upstream response; resolves when the client response has ended, or the client went away (and a stream
 * read on for its usage, within `drain`, has ended too).
 */
export function relay(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, usage = true, drain?: DrainBounds): Promise<void> {
  const { res } = ctx;
  const status = upstream.statusCode ?? 502;
  const headers = clientHeaders(ctx, upstream);
  const type = String(upstream.headers['content-type'] ?? '');
  const encoded = upstream.headers['content-encoding'] !== undefined && upstream.headers['content-encoding'] !== 'identity';
  // Set by the stream relays: copies what they observed onto ctx, as metering may settle before the upstream's own end;
  // true when the stream is read on for its usage instead (usage-drain.ts), and `ended` is called when that read ends.
  let abandon: ((ended: () => void) => boolean) | undefined;
  const { promise: done, resolve, reject } = Promise.withResolvers<void>();
  res.once('close', () => {
    // A JSON-array stream cut upstream is cut to the client too (relayTee): that close is not the client leaving.
    if (!res.writableFinished && ctx.outcome !== 'missing-terminal') {
      ctx.outcome = 'disconnected';
      if (abandon?.(resolve)) return;
      upstream.destroy();
    }
    resolve();
  });

  if (status >= 400 || encoded) {
    // Upstream errors pass through in their own native shape and status.
    ctx.outcome = status >= 400 ? 'failed' : 'completed';
    res.writeHead(status, headers);
    upstream.once('close', () => upstreamEnded(ctx, upstream));
    upstream.pipe(res);
  } else if (type.includes('text/event-stream')) {
    abandon = relayStream(ctx, upstream, status, headers, keepaliveMs, usage ? drain : undefined);
  } else if (ctx.stream) {
    abandon = relayTee(ctx, upstream, status, headers, usage);
  } else {
    // A body cut short fails the request while nothing has reached the client, so it still gets a proper 502.
    relayBody(ctx, upstream, status, headers, type.includes('json'), usage, reject);
  }
  return done;
}

function relayBody(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, isJson: boolean, usage: boolean, fail: (err: GatewayError) => void): void {
  wholeBody(ctx, upstream, (body) => {
    if (body) return send(ctx, body, status, headers, isJson, usage);
    if (ctx.res.destroyed) return;
    ctx.outcome = 'failed';
    ctx.endedBy = 'upstream';
    fail(proxyErrors.upstream_truncated());
  });
}

/**
 * The whole upstream body to `done` once it ended (undefined when it was cut short), at most `limit` bytes kept, the
 * upstream's end timed: taken whole when no one reads the response as a stream (UpstreamResponse.whole), else read
 * through its events alongside that reader (a response pinned by its id is read for that too).
 */
export function wholeBody(ctx: Ctx, upstream: UpstreamResponse, done: (body: Buffer | undefined) => void, limit = Infinity): void {
  const taken = upstream.whole((body) => {
    if (body) ctx.timings.upstreamEnd = performance.now();
    done(body);
  }, limit);
  if (taken) return;
  // Read as a stream already: its bytes through readAll's events, alongside that reader.
  void readAll(upstream, limit).then((bytes) => done(upstreamEnded(ctx, upstream) && upstream.complete ? bytes : undefined));
}

/** Answer with a complete upstream body: usage read from it, the client's model name written back when aliased. */
function send(ctx: Ctx, upstreamBody: Buffer, status: number, headers: OutgoingHttpHeaders, isJson: boolean, usage: boolean): void {
  let body = upstreamBody;
  let outcome: Outcome = 'completed';
  if (isJson) {
    try {
      const text = body.toString('utf8');
      const rename = !!ctx.model && !!ctx.upstreamModel && ctx.model !== ctx.upstreamModel;
      // Only the parts usage and the stop reason are read from, unless the answer is rewritten.
      const parts = rename ? undefined : ctx.format.answerParts;
      const json = parts ? pickJson(text, parts) : JSON.parse(text);
      if (usage) ctx.usage = ctx.format.usageFromBody(json);
      if (ctx.format.incomplete?.(json)) outcome = 'incomplete';
      if (rename && json && typeof json === 'object') {
        ctx.format.setModel(json, ctx.model!);
        body = Buffer.from(JSON.stringify(json));
      }
    } catch { /* not JSON after all: relay the bytes untouched */ }
  }
  ctx.outcome = outcome;
  headers['content-length'] = body.length;
  headers['x-gateway-overhead-ms'] = overheadMs(ctx, ctx.timings.upstreamEnd);
  ctx.res.writeHead(status, headers).end(body);
}

/**
 * A stream that is not SSE (Gemini's JSON array): bytes go out as they arrive; the format reads the whole at the end
 * (FormatAdapter.readWholeStream). Returns what to do when the client leaves first.
 */
function relayTee(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, usage: boolean): () => boolean {
  const chunks: Buffer[] = [];
  const read = (complete: boolean) => ctx.format.readWholeStream?.(Buffer.concat(chunks).toString('utf8'), complete);
  ctx.res.writeHead(status, headers);
  upstream.on('data', (c: Buffer) => { chunks.push(c); ctx.res.write(c); });
  upstream.once('close', () => {
    if (upstreamEnded(ctx, upstream)) {
      const seen = read(true);
      if (usage) ctx.usage = seen?.usage;
      ctx.outcome = seen?.failed ? 'failed' : seen?.incomplete ? 'incomplete' : 'completed';
      ctx.res.end();
      return;
    }
    if (upstream.complete || ctx.outcome === 'disconnected') return;
    ctx.outcome = 'missing-terminal';
    ctx.res.destroy();
  });
  // Its elements name the prompt as they come: nothing to read on for.
  return () => { if (usage) ctx.usage = read(false)?.usage; return false; };
}

/** Relays an SSE stream frame by frame through the format's scanner; returns what to do when the client leaves first. */
function relayStream(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, keepaliveMs: number, bounds: DrainBounds | undefined): (ended: () => void) => boolean {
  const { res, format } = ctx;
  const parser = new SseParser();
  const scanner = format.scanStream(ctx);
  // A stream that waited for an account already sent its 200 with the queue's keepalives. The headers go out at once
  // only when no bytes wait to follow them. The frames held for the first content do: the headers go in one write with
  // them as the stream flows on (exchange.ts: at once, or once a pinned id is stored), not in a write of their own.
  if (!res.headersSent) {
    res.writeHead(status, { ...headers, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    if (upstream.readableLength === 0) res.flushHeaders();
  }
  // One timer for the stream, pushed back by every chunk (refresh: no new timer per chunk).
  const keepalive = format.keepalive;
  const timer = keepalive && keepaliveMs > 0
    ? setTimeout(function beat(this: NodeJS.Timeout) { res.write(keepalive); this.refresh(); }, keepaliveMs)
    : undefined;
  // Nothing of an earlier chunk waits in the parser (no partial frame, no partial character).
  let aligned = true;
  /** Set once the client left a stream that is read on for its usage: frames go to the scanner only. */
  let drain: UsageDrain | undefined;
  upstream.on('data', (chunk: Buffer) => {
    if (drain) {
      if (drain.take(chunk)) for (const frame of parser.push(chunk)) scanner.frame(frame);
      return;
    }
    timer?.refresh();
    const fresh = aligned;
    let out = '';
    let changed = false;
    for (const frame of parser.push(chunk)) {
      const verdict = scanner.frame(frame);
      if (verdict === 'pass') out += frame.raw;
      else {
        changed = true;
        if (verdict !== 'drop') out += verdict.replace;
      }
    }
    // A chunk that ends at a frame's end on an ASCII byte leaves nothing waiting (a UTF-8 character never ends early).
    aligned = parser.idle && chunk[chunk.length - 1] < 0x80;
    // Frames that passed as they came, made of exactly this chunk's bytes: the chunk itself goes out, not re-encoded.
    if (fresh && aligned && !changed && out) res.write(chunk);
    else if (out) res.write(out);
  });
  let finished = false;
  const observe = () => {
    finished = true;
    clearTimeout(timer);
    ctx.usage = scanner.usage();
    ctx.streamed = scanner.streamed?.();
  };
  const finish = () => {
    if (finished) return;
    observe();
    if (drain) return drain.end();
    if (scanner.error()) ctx.outcome = 'failed';
    else if (scanner.terminal()) ctx.outcome = scanner.incomplete?.() ? 'incomplete' : 'completed';
    else if (!res.writableEnded && !res.destroyed) {
      // Never let a cut stream look like a clean finish: end it with the format's own error event.
      ctx.outcome = 'missing-terminal';
      res.write(format.streamError(proxyErrors.upstream_stream_truncated(), ctx));
    }
    res.end();
  };
  upstream.once('aborted', finish);
  upstream.once('error', finish);
  upstream.once('close', () => { upstreamEnded(ctx, upstream); finish(); });
  // The client left: what was seen so far is what gets billed, and the ending stays 'disconnected'; a stream that has not
  // named its prompt's tokens is read on (bounded) for the usage its end reports.
  return (ended) => {
    if (finished) return false;
    if (!drainWanted(scanner.usage(), bounds)) { observe(); return false; }
    clearTimeout(timer);
    drain = new UsageDrain(upstream, bounds, ended);
    return true;
  };
}

/**
 * On the upstream response's 'close': whether it ended whole (read to its end, not cut), timing that end if so. The
 * relays listen for 'close' rather than 'end' (attempt.ts ENDINGS).
 */
export function upstreamEnded(ctx: Ctx, upstream: UpstreamResponse): boolean {
  if (!upstream.readableEnded) return false;
  ctx.timings.upstreamEnd = performance.now();
  return true;
}

/** Streams waiting for an account get the format's keepalive: the 200 and SSE headers go out with the first one. */
export function queueKeepalive(ctx: Ctx, keepaliveMs: number): ((waitedMs: number) => void) | undefined {
  const frame = ctx.format.keepalive;
  if (!ctx.stream || !frame || keepaliveMs <= 0) return undefined;
  let sent = 0;
  return (waited) => {
    if (waited < (sent + 1) * keepaliveMs || ctx.res.destroyed) return;
    if (!ctx.res.headersSent) {
      ctx.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    }
    sent = Math.floor(waited / keepaliveMs);
    ctx.res.write(frame);
  };
}
