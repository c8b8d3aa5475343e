// Relays a native upstream response to the client: SSE through the stream pump with the format's scanner, a JSON-array stream teed, JSON read for usage.
import type { OutgoingHttpHeaders } from 'node:http';
import { headerMatcher } from '../../adapters/shared/headers.ts';
import type { GatewayError } from '../../core/errors.ts';
import { pickJson } from '../../core/json-pick.ts';
import { readAll, type Opening } from './attempt.ts';
import { proxyErrors } from './pool-errors.ts';
import type { Ctx, FormatAdapter, FrameVerdict, Outcome, SseFrame, StreamedText, StreamScanner } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { RelayEnding, upstreamEnded, type Leaving } from './relay-ending.ts';
import { pumpStream, type FrameTransform } from './stream-pump.ts';
import type { UpstreamResponse } from './upstream-response.ts';
import type { DrainBounds } from './usage-drain.ts';

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
 * Relay one upstream response, going on from a held stream's `opening`; resolves when the client response has ended, or
 * the client went away (and a stream read on for its usage, within `drain`, has ended too).
 */
export function relay(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, usage = true, drain?: DrainBounds, opening?: Opening): Promise<void> {
  const status = upstream.statusCode ?? 502;
  const headers = clientHeaders(ctx, upstream);
  const type = String(upstream.headers['content-type'] ?? '');
  const encoded = upstream.headers['content-encoding'] !== undefined && upstream.headers['content-encoding'] !== 'identity';
  const ending = new RelayEnding(ctx, upstream);
  if (status >= 400 || encoded) {
    // Upstream errors pass through in their own native shape and status.
    ctx.end(status >= 400 ? 'failed' : 'completed');
    ctx.res.writeHead(status, headers);
    upstream.once('close', () => upstreamEnded(ctx, upstream));
    upstream.pipe(ctx.res);
  } else if (type.includes('text/event-stream')) {
    ending.leaving = pumpStream(ctx, upstream, status, headers, keepaliveMs, new ScannedFrames(opening?.scanner ?? ctx.format.scanStream(ctx)), usage ? drain : undefined, opening);
  } else if (ctx.stream) {
    ending.leaving = relayTee(ctx, upstream, status, headers, usage);
  } else {
    // A body cut short fails the request while nothing has reached the client, so it still gets a proper 502.
    relayBody(ctx, upstream, status, headers, type.includes('json'), usage, ending.fail);
  }
  return ending.done;
}

function relayBody(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, isJson: boolean, usage: boolean, fail: (err: GatewayError) => void): void {
  wholeBody(ctx, upstream, (body) => {
    if (body) return send(ctx, body, status, headers, isJson, usage);
    if (ctx.res.destroyed) return;
    ctx.end('failed', 'upstream');
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
  ctx.end(outcome);
  headers['content-length'] = body.length;
  headers['x-gateway-overhead-ms'] = overheadMs(ctx, ctx.timings.upstreamEnd);
  ctx.res.writeHead(status, headers).end(body);
}

/**
 * A stream that is not SSE (Gemini's JSON array): bytes go out as they arrive; the format reads the whole at the end
 * (FormatAdapter.readWholeStream). Returns what to do when the client leaves first.
 */
function relayTee(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, usage: boolean): Leaving {
  const chunks: Buffer[] = [];
  const read = (complete: boolean) => ctx.format.readWholeStream?.(Buffer.concat(chunks).toString('utf8'), complete);
  ctx.res.writeHead(status, headers);
  upstream.on('data', (c: Buffer) => { chunks.push(c); ctx.res.write(c); });
  upstream.once('close', () => {
    if (upstreamEnded(ctx, upstream)) {
      const seen = read(true);
      if (usage) ctx.usage = seen?.usage;
      ctx.end(seen?.failed ? 'failed' : seen?.incomplete ? 'incomplete' : 'completed');
      ctx.res.end();
      return;
    }
    // Cut upstream, it is cut to the client too, unless the client had already left.
    if (!upstream.complete && ctx.end('missing-terminal')) ctx.res.destroy();
  });
  // Its elements name the prompt as they come: nothing to read on for.
  return { leave: () => { if (usage) ctx.usage = read(false)?.usage; return false; } };
}

/**
 * A native stream's frames through the format's scanner (a held opening's: the one that read it): passed as they came,
 * unless it drops or rewrites one.
 */
class ScannedFrames implements FrameTransform {
  readonly #scanner: StreamScanner;

  constructor(scanner: StreamScanner) {
    this.#scanner = scanner;
  }

  frame(frame: SseFrame): string | undefined { return this.held(frame, this.#scanner.frame(frame)); }

  held(_frame: SseFrame, verdict: FrameVerdict): string | undefined {
    return verdict === 'pass' ? undefined : verdict === 'drop' ? '' : verdict.replace;
  }

  read(frame: SseFrame): void { this.#scanner.frame(frame); }
  end(): string { return ''; }

  ending(): Outcome | undefined {
    const scanner = this.#scanner;
    if (scanner.error()) return 'failed';
    if (!scanner.terminal()) return undefined;
    return scanner.incomplete?.() ? 'incomplete' : 'completed';
  }

  cutShort(ctx: Ctx): string { return ctx.format.streamError(proxyErrors.upstream_stream_truncated(), ctx); }
  close(): string { return ''; }
  usage(): Usage | undefined { return this.#scanner.usage(); }
  streamed(): StreamedText | undefined { return this.#scanner.streamed?.(); }
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
