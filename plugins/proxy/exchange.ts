// One exchange with one account: send the request, classify the answer, hold a stream's opening frames until its first
// content (an error before it can still fail over), relay the answer, and pin the id it created before the client can
// use it.
import type { Logger } from 'pino';
import type { AccountConfig, Attempt, Ctx, GroupConfig, UpstreamKind } from '../../core/types.ts';
import type { Affinity } from './affinity.ts';
import { ERROR_BODY_LIMIT, errorMessage, holdFirstContent, isSse, readAll, type Opening, type Upstreams } from './attempt.ts';
import { classify, type CooldownOptions } from './classify.ts';
import type { Failed, Failures } from './failures.ts';
import type { Crossing, Outbound } from './crossing.ts';
import { proxyErrors } from './pool-errors.ts';
import type { UpstreamResponse } from './upstream-response.ts';
import { answerDecoder } from '../upstream-access.ts';
import { decodedResponse } from './decoded-response.ts';
import type { DrainBounds } from './usage-drain.ts';

export interface ExchangeOptions extends CooldownOptions { keepalive_ms: number; first_content_ms: number; usage_drain_ms: number; usage_drain_bytes: number }

/** What one attempt came to: the request is answered (or the client left; `created`: the id it made, to pin), or the account failed. */
export type Tried = { done: true; created?: string } | Failed;

export class Exchange {
  readonly #upstreams: Upstreams;
  readonly #o: ExchangeOptions;
  readonly #affinity: Affinity;
  readonly #failures: Failures;
  readonly #log: Logger;
  readonly #drain: DrainBounds;
  readonly #kinds: Record<string, UpstreamKind>;

  /** `closing`: aborted when the gateway shuts down, which cuts the streams still read on for their usage. */
  constructor(upstreams: Upstreams, o: ExchangeOptions, affinity: Affinity, failures: Failures, log: Logger, closing?: AbortSignal, kinds: Record<string, UpstreamKind> = {}) {
    this.#upstreams = upstreams;
    this.#kinds = kinds;
    this.#o = o;
    this.#drain = { ms: o.usage_drain_ms, bytes: o.usage_drain_bytes, signal: closing };
    this.#affinity = affinity;
    this.#failures = failures;
    this.#log = log;
  }

  /** One attempt on one account. */
  async run(ctx: Ctx, trail: Attempt[], group: GroupConfig, account: AccountConfig, out: Outbound, crossing: Crossing): Promise<Tried> {
    const o = this.#o;
    const target = this.#upstreams.target(`${account.base_url ?? ctx.platform!.base_url}${out.path}`);
    ctx.timings.upstreamStart = performance.now();
    const sent = await this.#upstreams.send(ctx, target, out.headers, out.body.bytes);
    if (sent.kind === 'disconnected') { ctx.end('disconnected'); return { done: true }; }
    if (sent.kind === 'failure') return { done: false, verdict: classify(sent.failure, o), status: 0, code: sent.code };
    const status = sent.upstream.statusCode ?? 502;
    const kind = ctx.platform?.kind === undefined ? undefined : this.#kinds[ctx.platform.kind];
    const verdict = classify({ kind: 'status', status, headers: sent.upstream.headers }, o, Date.now(), kind?.resetMs);
    if (verdict.failover) { sent.upstream.resume(); return { done: false, verdict, status }; }
    // A kind's own framing (Bedrock's event-stream) or error shape becomes its format's before anything reads it.
    const decoder = kind?.decode ? answerDecoder(kind, { platform: ctx.platform!, format: crossing.upstreamFormat, model: ctx.upstreamModel, stream: ctx.stream }, out.path, status, sent.upstream.headers) : undefined;
    const upstream = decoder ? decodedResponse(sent.upstream, decoder) : sent.upstream;
    const sse = isSse(upstream.headers);
    let early: string | undefined;
    let opening: Opening | undefined;
    if (status < 300 && ctx.stream && sse && o.first_content_ms > 0) {
      const held = await holdFirstContent(ctx, upstream, o.first_content_ms, crossing.upstreamFormat);
      if (held.kind === 'disconnected') { ctx.end('disconnected'); return { done: true }; }
      if (held.kind === 'failure') return { done: false, verdict: classify(held.failure, o), status };
      opening = held.opening;
      if (crossing.pins) early = this.#affinity.streamedId(ctx);
    }
    ctx.timings.firstByte = performance.now();
    this.#failures.record(ctx, trail, group, account, status, verdict.reason);
    if (ctx.res.headersSent && !(status < 300 && sse)) return intoCommittedStream(ctx, upstream, status);
    const whole = crossing.pins && !ctx.stream && status < 300 ? readAll(upstream) : undefined;
    // A client that leaves mid-stream keeps the slot until the stream read on for its usage ends (usage-drain.ts): the
    // upstream still works for it on this account.
    const relayed = crossing.relay(ctx, upstream, o.keepalive_ms, this.#drain, opening);
    // The held stream flows on only once its id is pinned: the client can never continue it before the pin exists
    // (the one store call during an answer; a whole answer's id is pinned as its slot goes back).
    if (early) await this.#affinity.pinNow(ctx, group, early, account).catch((err) => this.#log.warn({ err, req_id: ctx.id }, 'response pin failed'));
    upstream.resume();
    await relayed;
    const late = whole ? this.#affinity.bodyId(ctx, await whole) : crossing.pins && status < 300 && ctx.stream ? this.#affinity.streamedId(ctx) : undefined;
    return late !== undefined && late !== early ? { done: true, created: late } : { done: true };
  }
}

/** A stream committed by queue keepalives cannot take a status any more: the upstream's refusal becomes its error event. */
async function intoCommittedStream(ctx: Ctx, upstream: UpstreamResponse, status: number): Promise<Tried> {
  const text = (await readAll(upstream, ERROR_BODY_LIMIT)).toString('utf8');
  ctx.end('failed', 'upstream');
  throw proxyErrors.upstream_error(errorMessage(text) ?? `The upstream answered ${status} to a stream request`, { status: status < 400 ? 502 : status });
}
