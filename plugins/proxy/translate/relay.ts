// Relays a translated answer: the upstream's error, whole answer or stream decoded by its format's codec and written in
// the client's own by the client's codec. Usage is the upstream's own numbers, as its decoder read them.
import type { OutgoingHttpHeaders } from 'node:http';
import type { Ctx } from '../../../core/types.ts';
import { ERROR_BODY_LIMIT, readAll, type Opening } from '../attempt.ts';
import { proxyErrors } from '../pool-errors.ts';
import { overheadMs, wholeBody } from '../relay.ts';
import { RelayEnding, upstreamEnded } from '../relay-ending.ts';
import { sendJson } from '../../../core/reply.ts';
import { pumpStream } from '../stream-pump.ts';
import type { UpstreamResponse } from '../upstream-response.ts';
import type { DrainBounds } from '../usage-drain.ts';
import { CodecFrames, type Codecs } from './frames.ts';

/** Largest whole (non-stream) upstream answer read for translation. */
const WHOLE_LIMIT = 64 * 1024 * 1024;

function headersFor(ctx: Ctx, type: string, extra?: Record<string, string>, since?: number): OutgoingHttpHeaders {
  return { 'content-type': type, ...extra, 'x-request-id': ctx.id, 'x-gateway-overhead-ms': overheadMs(ctx, since) };
}

/** Write one JSON answer (an error or a whole response) in the client's format. */
function answer(ctx: Ctx, status: number, body: unknown, extra?: Record<string, string>): void {
  sendJson(ctx.res, status, body, headersFor(ctx, 'application/json', extra, ctx.timings.upstreamEnd));
}

/**
 * Relay one translated upstream answer, a held stream's `opening` first; resolves when the client response ended, or the
 * client left (and a stream read on for its usage, within `drain`, has ended too).
 */
export function relayTranslated(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, c: Codecs, drain?: DrainBounds, opening?: Opening): Promise<void> {
  const status = upstream.statusCode ?? 502;
  const ending = new RelayEnding(ctx, upstream);
  if (status >= 400) {
    void readAll(upstream, ERROR_BODY_LIMIT).then((bytes) => {
      upstreamEnded(ctx, upstream);
      const text = bytes.toString('utf8');
      const out = c.client.encodeError(c.upstream.decodeError(status, text));
      ctx.end('failed');
      answer(ctx, out.status, out.body, out.headers);
    }).catch(ending.fail);
  } else if (ctx.stream) {
    const headers = headersFor(ctx, c.client.streamContentType(c.cctx.request));
    ending.leaving = pumpStream(ctx, upstream, 200, headers, keepaliveMs, new CodecFrames(c), drain, opening);
  } else {
    const failed = (err: unknown) => { ctx.end('failed', 'upstream'); ending.fail(err); };
    wholeBody(ctx, upstream, (bytes) => {
      if (!bytes) return failed(proxyErrors.upstream_truncated());
      whole(ctx, bytes.toString('utf8'), c).catch(failed);
    }, WHOLE_LIMIT);
  }
  return ending.done;
}

/** A whole answer (or a count), decoded and encoded. */
async function whole(ctx: Ctx, text: string, c: Codecs): Promise<void> {
  let json: unknown;
  try { json = JSON.parse(text); } catch {
    throw proxyErrors.upstream_invalid();
  }
  if (c.cctx.request.operation === 'count_tokens') {
    ctx.end('completed');
    return answer(ctx, 200, c.client.encodeCount(c.upstream.decodeCount(json), c.cctx));
  }
  const res = c.upstream.decodeResponse(json, c.cctx);
  ctx.usage = res.usage;
  ctx.end(res.stop === 'max_tokens' ? 'incomplete' : 'completed');
  const body = c.client.encodeResponse(res, c.cctx);
  await c.signed?.(res.content.filter((b) => b.type === 'tool_call'));
  await c.keep?.(res, body).catch((err) => ctx.log.warn({ err, req_id: ctx.id }, 'conversation not kept'));
  answer(ctx, 200, body);
}
