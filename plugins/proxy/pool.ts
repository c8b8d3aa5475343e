// Serves one request from the group's account pool: pinned or sticky account first, one attempt per account, failover before
// the first byte, cool-downs by the classifier, the relay of the answer, then stickiness and response pins recorded.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { GatewayError } from '../../core/errors.ts';
import type { AccountConfig, Attempt, Ctx, Env, GroupConfig } from '../../core/types.ts';
import type { AcquireAccountRequest, FoundBinding, LeaseEnding } from '../../core/store/types.ts';
import { errorMessage, holdFirstContent, isSse, readAll, Upstreams, type AttemptOptions } from './attempt.ts';
import { classify, type CooldownOptions, type Verdict } from './classify.ts';
import { conversationUnavailable, exhausted, noCandidates } from './pool-errors.ts';
import { poolMetrics } from './pool-metrics.ts';
import { relay } from './relay.ts';
import { accountModel, candidatesFor, Scheduler, type ScheduleOptions } from './schedule.ts';
import { dig, sessionKey, type SessionOptions } from './session.ts';
import { upstreamBody, upstreamHeaders, upstreamPath } from './upstream-request.ts';

export interface PoolOptions extends CooldownOptions, ScheduleOptions, SessionOptions, AttemptOptions {
  keepalive_ms: number;
  usage: boolean;
  max_switches: number;
  sticky_ttl_ms: number;
  pin_ttl_ms: number;
}

type Body = { bytes?: Buffer; json: boolean };

/** An account failed before the first byte: how (classified), its status (0: no answer), the socket error code. */
type Failed = { done: false; verdict: Verdict; status: number; code?: string };
/** What one attempt came to: the request is answered (or the client left; `pin`: the id it created, to pin), or the account failed. */
type Tried = { done: true; pin?: string } | Failed;
/**
 * The first choice, looked up by the store within the first account decision: the account a stored object this request
 * continues is pinned to (that account only), else the session's account.
 */
interface Preference { bound: NonNullable<AcquireAccountRequest['bound']>; session?: string }

/** The request's admission, left by rate-limit for this stage to send together with its first account decision. */
function admission(ctx: Ctx): Promise<void> | undefined {
  const send = ctx.sendAdmission;
  ctx.sendAdmission = undefined;
  return send?.();
}

export function createPool(o: PoolOptions, env: Env) {
  const { store, log } = env;
  const metrics = poolMetrics(env.metrics, env.config, store);
  const scheduler = new Scheduler(store, o, metrics);
  const upstreams = new Upstreams(o);

  /** The stored objects this request continues or reads, when the format pins such ids. */
  async function pinIds(ctx: Ctx): Promise<string[]> {
    const pins = ctx.format.pins;
    if (!pins) return [];
    const ids: string[] = [];
    for (const p of pins.pathParams) {
      const first = ctx.params[p]?.split('/')[0];
      if (first) ids.push(first);
    }
    if (ctx.req.method !== 'GET' && (await ctx.body()).length > 0) {
      try {
        const id = dig(await ctx.json(), pins.requestField);
        if (typeof id === 'string' && id !== '') ids.push(id);
      } catch { /* not JSON: nothing names a stored object */ }
    }
    return ids;
  }

  /** The id of what a stream created, as its scanner saw it. */
  const streamedId = (ctx: Ctx): string | undefined => {
    const pins = ctx.format.pins;
    const id = pins ? (ctx.flags[pins.streamFlag.flag] as Record<string, unknown> | undefined)?.[pins.streamFlag.field] : undefined;
    return typeof id === 'string' ? id : undefined;
  };

  /** Streams waiting for an account get the format's keepalive: the 200 and SSE headers go out with the first one. */
  function keepalives(ctx: Ctx): ((waitedMs: number) => void) | undefined {
    const frame = ctx.format.keepalive;
    if (!ctx.stream || !frame || o.keepalive_ms <= 0) return undefined;
    let sent = 0;
    return (waited) => {
      if (waited < (sent + 1) * o.keepalive_ms || ctx.res.destroyed) return;
      if (!ctx.res.headersSent) {
        ctx.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      }
      sent = Math.floor(waited / o.keepalive_ms);
      ctx.res.write(frame);
    };
  }

  /** The body to send to this account: re-serialised only when its model_map names another model. */
  async function bodyFor(ctx: Ctx, base: Body, baseModel: string | undefined, model: string | undefined): Promise<Body> {
    const where = ctx.format.model;
    if (model === baseModel || model === undefined || 'param' in where) return base;
    if ('body' in where) return { bytes: Buffer.from(JSON.stringify({ ...(await ctx.json()), [where.body]: model })), json: true };
    await where.write?.(ctx, model);
    const body = await upstreamBody(ctx);
    await where.write?.(ctx, baseModel!);
    return body;
  }

  /** Bookkeeping of a failed attempt: record it, cool the account down, flag credentials that need an operator. */
  async function failed(ctx: Ctx, trail: Attempt[], group: GroupConfig, account: AccountConfig, f: Failed): Promise<void> {
    const { verdict, status } = f;
    record(ctx, trail, group, account, status, verdict.reason);
    log.info({ req_id: ctx.id, group: group.name, account: account.id, status, reason: verdict.reason, code: f.code, cooldown_ms: verdict.cooldownMs }, 'upstream attempt failed');
    if (verdict.cooldownMs > 0) {
      await store.cooldown(group.name, account.id, Date.now() + verdict.cooldownMs, verdict.cooldownReason)
        .catch((err) => log.warn({ err, req_id: ctx.id }, 'account cool-down failed'));
    }
    if (verdict.reason === 'auth') {
      metrics.attention.inc({ group: group.name, account: account.id });
      log.warn({ req_id: ctx.id, group: group.name, account: account.id, pause_ms: verdict.cooldownMs },
        `upstream account "${account.id}" of group "${group.name}" was refused (401/403): its credential needs attention`);
    }
  }

  /** Every attempt goes into metrics; the list reaches ctx.attempts (and the usage record) once there is more than a clean one. */
  function record(ctx: Ctx, trail: Attempt[], group: GroupConfig, account: AccountConfig, status: number, reason: string): void {
    trail.push({ account: account.id, status, reason });
    if ((reason !== 'ok' && reason !== 'client_error') || trail.length > 1) ctx.attempts = trail;
    metrics.attempts.inc({ group: group.name, account: account.id, reason });
  }

  /** One attempt on one account: send, classify, and relay the answer when it is not a failover. */
  async function attempt(ctx: Ctx, trail: Attempt[], group: GroupConfig, account: AccountConfig, body: Body): Promise<Tried> {
    const target = upstreams.target(`${account.base_url ?? ctx.platform!.base_url}${upstreamPath(ctx)}`);
    ctx.timings.upstreamStart = performance.now();
    const sent = await upstreams.send(ctx, target, body.bytes);
    if (sent.kind === 'disconnected') { ctx.outcome = 'disconnected'; return { done: true }; }
    if (sent.kind === 'failure') return { done: false, verdict: classify(sent.failure, o), status: 0, code: sent.code };
    const upstream = sent.upstream;
    const status = upstream.statusCode ?? 502;
    const verdict = classify({ kind: 'status', status, headers: upstream.headers }, o);
    if (verdict.failover) { upstream.resume(); return { done: false, verdict, status }; }
    const sse = isSse(upstream.headers);
    let early: string | undefined;
    if (status < 300 && ctx.stream && sse) {
      const flags = { ...ctx.flags };
      const held = await holdFirstContent(ctx, upstream, o.first_content_ms);
      if (held.kind === 'disconnected') { ctx.outcome = 'disconnected'; return { done: true }; }
      if (held.kind === 'failure') {
        // What the throwaway scanner left in ctx.flags belongs to the failed attempt.
        for (const k of Object.keys(ctx.flags)) if (!(k in flags)) delete ctx.flags[k];
        Object.assign(ctx.flags, flags);
        return { done: false, verdict: classify(held.failure, o), status };
      }
      early = streamedId(ctx);
    }
    ctx.timings.firstByte = performance.now();
    record(ctx, trail, group, account, status, verdict.reason);
    if (ctx.res.headersSent && !(status < 300 && sse)) return intoCommittedStream(ctx, upstream, status);
    const whole = ctx.format.pins && !ctx.stream && status < 300 ? collect(upstream) : undefined;
    const relayed = relay(ctx, upstream, o.keepalive_ms, o.usage);
    // The held stream flows on only once its id is pinned: the client can never continue it before the pin exists
    // (the one store call during an answer; a whole answer's id is pinned as its slot goes back).
    if (early) await store.bind(group.name, 'pin', early, account.id, o.pin_ttl_ms).catch((err) => log.warn({ err, req_id: ctx.id }, 'response pin failed'));
    upstream.resume();
    await relayed;
    const late = whole ? idOf(await whole, ctx.format.pins!.bodyField) : status < 300 && ctx.stream ? streamedId(ctx) : undefined;
    return late !== undefined && late !== early ? { done: true, pin: late } : { done: true };
  }

  /** A stream committed by queue keepalives cannot take a status any more: the upstream's refusal becomes its error event. */
  async function intoCommittedStream(ctx: Ctx, upstream: IncomingMessage, status: number): Promise<Tried> {
    const text = await readAll(upstream);
    ctx.outcome = 'failed';
    throw new GatewayError(status < 400 ? 502 : status, 'upstream_error', errorMessage(text) ?? `The upstream answered ${status} to a stream request`);
  }

  /** Where the request should go first: the pinned account only (a stored conversation), else its session's account. */
  async function preference(ctx: Ctx, group: GroupConfig, candidates: AccountConfig[]): Promise<Preference> {
    const bound: Preference['bound'] = (await pinIds(ctx)).map((name) => ({ kind: 'pin', name }));
    if (!candidates.length) {
      // Nothing can serve it; a conversation pinned to an account that is gone says so (rare: a lookup of its own).
      for (const { name } of bound) if (await store.bound(group.name, 'pin', name) !== undefined) throw conversationUnavailable(name, 'gone', Date.now());
      throw noCandidates(group, ctx.upstreamModel);
    }
    const session = candidates.length < 2 ? undefined : await sessionKey(ctx, o);
    if (session !== undefined) bound.push({ kind: 'sticky', name: session });
    return { bound, session };
  }

  /** The answer when no account could be had (or the pinned one failed): by class, or the conversation's own error. */
  async function refusal(group: GroupConfig, candidates: AccountConfig[], trail: Attempt[], pin: FoundBinding | undefined, why?: Failed | 'none'): Promise<GatewayError> {
    const now = Date.now();
    if (pin === undefined) return exhausted(group, trail, await store.accountStates(group.name, candidates.map((a) => a.id), now), now);
    if (why === 'none') return conversationUnavailable(pin.name, 'gone', now);
    const [state] = await store.accountStates(group.name, [pin.account], now);
    // A failure without a cool-down (a 5xx, error_ms 0) still says why.
    return conversationUnavailable(pin.name, why && !state.coolingUntil ? { ...state, reason: why.verdict.cooldownReason } : state, now);
  }

  /**
   * What the store learns as the slot goes back: a good exchange ends the account's probing and binds (or moves) the
   * session, restarting its TTL; an id the answer created is pinned to the account.
   */
  function ending(ctx: Ctx, p: Preference, pin: FoundBinding | undefined, done: { pin?: string }): LeaseEnding | undefined {
    const good = ctx.outcome === 'completed' || ctx.outcome === 'incomplete';
    const bind: NonNullable<LeaseEnding['bind']> = [];
    if (done.pin !== undefined) bind.push({ kind: 'pin', name: done.pin, ttlMs: o.pin_ttl_ms });
    if (good && p.session !== undefined && !pin) bind.push({ kind: 'sticky', name: p.session, ttlMs: o.sticky_ttl_ms });
    if (!good && !bind.length) return undefined;
    return { ...(good ? { succeededAt: Date.now() } : {}), ...(bind.length ? { bind } : {}) };
  }

  return async function serve(ctx: Ctx): Promise<void> {
    const group = ctx.group!;
    const baseModel = ctx.upstreamModel;
    const candidates = candidatesFor(group, baseModel);
    const base = await upstreamBody(ctx);
    const clientHeaders: IncomingHttpHeaders = ctx.req.headers;
    const p = await preference(ctx, group, candidates);
    const tried = new Set<string>();
    const trail: Attempt[] = [];
    const waiting = keepalives(ctx);
    /** The pin the first decision found: the conversation lives on that account only. */
    let pin: FoundBinding | undefined;
    for (let n = 0; ; n++) {
      const first = n === 0;
      // One round trip before the upstream call: the admission, the binding lookup and the account decision.
      const acquired = await scheduler.acquire(ctx,
        { group, candidates: candidates.filter((a) => !tried.has(a.id)), bound: first ? p.bound : undefined, waiting },
        n, first ? admission(ctx) : undefined);
      if (!acquired) { ctx.outcome = 'disconnected'; return; }
      if (first && acquired.bound?.kind === 'pin') pin = acquired.bound;
      if (!acquired.ok) throw await refusal(group, candidates, trail, pin, acquired.reason === 'none' ? 'none' : undefined);
      const lease = acquired.lease;
      const account = candidates.find((a) => a.id === lease.account)!;
      if (first && p.session !== undefined && !pin) {
        metrics.sticky.inc({ result: acquired.bound === undefined ? 'miss' : acquired.preferred ? 'hit' : 'moved' });
      }
      let result: Tried | undefined;
      try {
        ctx.account = account;
        ctx.upstreamModel = accountModel(account, baseModel);
        const body = await bodyFor(ctx, base, baseModel, ctx.upstreamModel);
        // http-proxy-3 copies the outgoing headers from req.headers: hand it the cleaned set for this account.
        ctx.req.headers = clientHeaders;
        ctx.req.headers = upstreamHeaders(ctx, account, env, body);
        result = await attempt(ctx, trail, group, account, body);
      } finally {
        // Not awaited: after an answer, the slot, the success and the bindings reach the store in the same round trip
        // as the settlement that follows.
        scheduler.release(lease, result?.done ? ending(ctx, p, pin, result) : undefined)
          .catch((err) => log.warn({ err, req_id: ctx.id }, 'account release failed'));
      }
      if (result.done) return;
      await failed(ctx, trail, group, account, result);
      tried.add(account.id);
      if (pin) throw await refusal(group, candidates, trail, pin, result);
      if (n >= o.max_switches || tried.size >= candidates.length) throw await refusal(group, candidates, trail, pin);
      metrics.failovers.inc({ group: group.name, reason: result.verdict.reason });
    }
  };
}

function collect(upstream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  upstream.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) => {
    upstream.once('end', () => resolve(Buffer.concat(chunks)));
    upstream.once('close', () => resolve(Buffer.concat(chunks)));
  });
}

function idOf(body: Buffer, field: string): string | undefined {
  try {
    const id = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[field];
    return typeof id === 'string' ? id : undefined;
  } catch { return undefined; }
}
