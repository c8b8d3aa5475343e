// Relays a translated answer: the upstream's error, whole answer or stream decoded by its format's codec and written in
// the client's own by the client's codec. Usage is the upstream's own numbers, as its decoder read them.
import type { OutgoingHttpHeaders } from 'node:http';
import type { CanonError, CanonEvent, CanonResponse, Codec, CodecContext } from '../../../core/canonical.ts';
import { collectEvents } from '../../../adapters/shared/collect-events.ts';
import { SseParser } from '../../../adapters/shared/sse.ts';
import type { Ctx } from '../../../core/types.ts';
import type { Usage } from '../../../core/usage.ts';
import { ERROR_BODY_LIMIT, readAll } from '../attempt.ts';
import { proxyErrors } from '../pool-errors.ts';
import { overheadMs, upstreamEnded, wholeBody } from '../relay.ts';
import { sendJson } from '../../../core/reply.ts';
import type { UpstreamResponse } from '../upstream-response.ts';
import { drainWanted, UsageDrain, type DrainBounds } from '../usage-drain.ts';

/** The two codecs of a translated exchange, what they share, and where a finished answer is kept (Codec.state). */
export interface Codecs {
  client: Codec;
  upstream: Codec;
  cctx: CodecContext;
  /** Keeps the answer (canonical, and as the client saw it) before the client can name it in its next request. */
  keep?: (res: CanonResponse, answer: unknown) => Promise<void>;
}

/** Largest whole (non-stream) upstream answer read for translation. */
const WHOLE_LIMIT = 64 * 1024 * 1024;

function headersFor(ctx: Ctx, type: string, extra?: Record<string, string>, since?: number): OutgoingHttpHeaders {
  return { 'content-type': type, ...extra, 'x-request-id': ctx.id, 'x-gateway-overhead-ms': overheadMs(ctx, since) };
}

/** Write one JSON answer (an error or a whole response) in the client's format. */
function answer(ctx: Ctx, status: number, body: unknown, extra?: Record<string, string>): void {
  sendJson(ctx.res, status, body, headersFor(ctx, 'application/json', extra, ctx.timings.upstreamEnd));
}

/** What a stream showed of its answer so far: the usage, the text relayed, and how it ended. */
class Observed {
  #usage: Partial<Usage> | undefined;
  chars = 0;
  finish: (CanonEvent & { type: 'finish' }) | undefined;
  error: CanonError | undefined;

  see(e: CanonEvent): void {
    switch (e.type) {
      case 'start': if (e.usage) this.#usage = { ...this.#usage, ...e.usage }; break;
      case 'usage': this.#usage = { ...this.#usage, ...e.usage }; break;
      case 'delta': this.chars += (e.text?.length ?? 0) + (e.arguments?.length ?? 0); break;
      case 'finish': this.finish = e; if (e.usage) this.#usage = { ...e.usage }; break;
      case 'error': this.error = e.error; break;
    }
  }

  usage(): Usage | undefined {
    const u = this.#usage;
    if (!u) return undefined;
    return { input: u.input ?? 0, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0, output: u.output ?? 0, reasoning: u.reasoning ?? 0, ...(u.cacheWrite1h ? { cacheWrite1h: u.cacheWrite1h } : {}) };
  }
}

/**
 * Relay one translated upstream answer; resolves when the client response ended, or the client left (and a stream read
 * on for its usage, within `drain`, has ended too).
 */
export function relayTranslated(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, c: Codecs, drain?: DrainBounds): Promise<void> {
  const status = upstream.statusCode ?? 502;
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  let abandon: ((ended: () => void) => boolean) | undefined;
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) {
      ctx.outcome = 'disconnected';
      if (abandon?.(resolve)) return;
      upstream.destroy();
    }
    resolve();
  });
  if (status >= 400) {
    void readAll(upstream, ERROR_BODY_LIMIT).then((bytes) => {
      upstreamEnded(ctx, upstream);
      const text = bytes.toString('utf8');
      const out = c.client.encodeError(c.upstream.decodeError(status, text));
      ctx.outcome = 'failed';
      answer(ctx, out.status, out.body, out.headers);
    }).catch(reject);
  } else if (ctx.stream) {
    abandon = relayEvents(ctx, upstream, keepaliveMs, c, drain);
  } else {
    const failed = (err: unknown) => { ctx.outcome = 'failed'; ctx.endedBy = 'upstream'; reject(err); };
    wholeBody(ctx, upstream, (bytes) => {
      if (!bytes) return failed(proxyErrors.upstream_truncated());
      whole(ctx, bytes.toString('utf8'), c).catch(failed);
    }, WHOLE_LIMIT);
  }
  return promise;
}

/** A whole answer (or a count), decoded and encoded. */
async function whole(ctx: Ctx, text: string, c: Codecs): Promise<void> {
  let json: unknown;
  try { json = JSON.parse(text); } catch {
    throw proxyErrors.upstream_invalid();
  }
  if (c.cctx.request.operation === 'count_tokens') {
    ctx.outcome = 'completed';
    return answer(ctx, 200, c.client.encodeCount(c.upstream.decodeCount(json), c.cctx));
  }
  const res = c.upstream.decodeResponse(json, c.cctx);
  ctx.usage = res.usage;
  ctx.outcome = res.stop === 'max_tokens' ? 'incomplete' : 'completed';
  const body = c.client.encodeResponse(res, c.cctx);
  await c.keep?.(res, body).catch((err) => ctx.log.warn({ err, req_id: ctx.id }, 'conversation not kept'));
  answer(ctx, 200, body);
}

/** A stream: upstream frames → canonical events → client frames. Returns what to do when the client leaves first. */
function relayEvents(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, c: Codecs, bounds: DrainBounds | undefined): (ended: () => void) => boolean {
  const { res } = ctx;
  const parser = new SseParser();
  const decoder = c.upstream.decodeStream(c.cctx);
  const encoder = c.client.encodeStream(c.cctx);
  const seen = new Observed();
  // A stream that waited for an account already sent its 200 with the queue's keepalives.
  if (!res.headersSent) {
    res.writeHead(200, { ...headersFor(ctx, c.client.streamContentType(c.cctx.request)), 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    res.flushHeaders();
  }
  const keepalive = ctx.format.keepalive;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (!keepalive || keepaliveMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => { res.write(keepalive); arm(); }, keepaliveMs);
  };
  arm();
  // Kept answers are folded from the events once whole.
  const events: CanonEvent[] | undefined = c.keep ? [] : undefined;
  const encode = (batch: CanonEvent[]): string => {
    let out = '';
    for (const e of batch) { seen.see(e); events?.push(e); out += encoder.event(e); }
    return out;
  };
  /** Set once the client left a stream that is read on for its usage: events are only seen, not encoded. */
  let drain: UsageDrain | undefined;
  upstream.on('data', (chunk: Buffer) => {
    if (drain) {
      if (drain.take(chunk)) for (const frame of parser.push(chunk)) for (const e of decoder.frame(frame)) seen.see(e);
      return;
    }
    arm();
    let out = '';
    for (const frame of parser.push(chunk)) out += encode(decoder.frame(frame));
    if (out) res.write(out);
  });
  let finished = false;
  const observe = () => {
    finished = true;
    clearTimeout(timer);
    ctx.usage = seen.usage();
    ctx.streamed = { chars: seen.chars, outputFinal: seen.finish?.usage !== undefined };
  };
  const finish = async () => {
    if (finished) return;
    if (drain) {
      for (const e of decoder.end()) seen.see(e);
      observe();
      return drain.end();
    }
    // An error the upstream sent in its stream fails the answer; one only its end brings is the stream's cut.
    const failed = seen.error !== undefined;
    let out = encode(decoder.end());
    if (failed) ctx.outcome = 'failed';
    else if (seen.finish && !seen.error) ctx.outcome = seen.finish.stop === 'max_tokens' ? 'incomplete' : 'completed';
    else {
      // Never let a cut stream look like a clean finish: the client's own error event, then its end.
      if (!seen.error) out += encode([{ type: 'error', error: { status: 502, kind: 'server', message: 'The upstream stream ended before it completed' } }]);
      ctx.outcome = 'missing-terminal';
    }
    observe();
    if (res.writableEnded || res.destroyed) return;
    if (c.keep && events && (ctx.outcome === 'completed' || ctx.outcome === 'incomplete')) {
      const folded = collectEvents(events);
      // What the stream's last event said, where it said the whole answer (its times included), else encoded.
      const answer = encoder.final?.() ?? c.client.encodeResponse(folded, c.cctx);
      await c.keep(folded, answer).catch((err) => ctx.log.warn({ err, req_id: ctx.id }, 'conversation not kept'));
    }
    res.end(out + encoder.end());
  };
  const onEnd = () => void finish();
  upstream.once('aborted', onEnd);
  upstream.once('error', onEnd);
  upstream.once('close', () => { upstreamEnded(ctx, upstream); onEnd(); });
  // The client left: what was seen so far is what gets billed, and the ending stays 'disconnected'; a stream that has not
  // named its prompt's tokens is read on (bounded) for the usage its end reports.
  return (ended) => {
    if (finished) return false;
    if (!drainWanted(seen.usage(), bounds)) { observe(); return false; }
    clearTimeout(timer);
    drain = new UsageDrain(upstream, bounds, ended);
    return true;
  };
}
