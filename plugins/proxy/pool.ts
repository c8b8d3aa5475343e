// Serves one request from the group's account pool: the preferred account first (affinity.ts), one exchange per account
// (exchange.ts), failover before the first byte with cool-downs and the credential check (failures.ts), each slot given
// back with what the exchange taught the store.
import type { Logger } from 'pino';
import { GatewayError } from '../../core/errors.ts';
import { CredentialFailure } from '../../core/credentials.ts';
import type { AccountConfig, Attempt, Ctx, Env, FormatAdapter } from '../../core/types.ts';
import { finishRequest } from '../upstream-access.ts';
import { reachModel } from '../reach.ts';
import type { FoundBinding } from '../../core/store/types.ts';
import { Affinity, type AffinityOptions, type Preference } from './affinity.ts';
import { Upstreams, type AttemptOptions } from './attempt.ts';
import type { CooldownOptions } from './classify.ts';
import { CredentialChecks } from './credential-check.ts';
import { NativeCrossing, type Crossing, type Outbound } from './crossing.ts';
import { Exchange, type Tried } from './exchange.ts';
import { Failures } from './failures.ts';
import { exhaustedGroup, fallBack } from './fallback.ts';
import { ADMISSION } from '../vars.ts';
import { requestRefused } from './pool-errors.ts';
import { poolMetrics, type PoolMetrics } from './pool-metrics.ts';
import { PoolNotices } from './pool-notices.ts';
import { queueKeepalive } from './relay.ts';
import { accountModel, candidatesFor, Scheduler, type Acquired, type ScheduleOptions } from './schedule.ts';
import { Conversations } from './translate/conversations.ts';
import { TranslatedCrossing } from './translate/crossing.ts';
import { MEDIA_DEFAULTS } from './translate/media.ts';
import { CallSignatures } from './translate/signatures.ts';
import { HeaderAllowList } from './upstream-request.ts';

export interface PoolOptions extends CooldownOptions, ScheduleOptions, AffinityOptions, AttemptOptions {
  keepalive_ms: number;
  usage_drain_ms: number;
  usage_drain_bytes: number;
  media_max_bytes: number;
  media_max_total_bytes: number;
  media_timeout_ms: number;
  media_allow_private: string[];
  signature_ttl_ms: number;
  usage: boolean;
  max_switches: number;
}

/** The request's admission, left by rate-limit for this stage to send together with its first account decision. */
const admission = (ctx: Ctx): Promise<void> | undefined => ctx.get(ADMISSION)?.send();

/** The parts of a pool, each testable on its own. */
export interface PoolParts {
  scheduler: Pick<Scheduler, 'acquire' | 'release'>;
  affinity: Affinity;
  failures: Failures;
  exchange: Pick<Exchange, 'run'>;
  metrics: Pick<PoolMetrics, 'failovers' | 'fallbacks'>;
  /** How the request crosses: natively, or translated when the group's platform speaks another format. */
  cross(ctx: Ctx): Promise<Crossing>;
  /** The account's request finished for the upstream (the kind's path, the credential, a signature), or why it cannot be. */
  finish(ctx: Ctx, account: AccountConfig, out: Outbound, format: FormatAdapter): Promise<Outbound | CredentialFailure>;
  env: Env;
  log: Logger;
}

export function poolParts(o: PoolOptions, env: Env): PoolParts {
  const { store, log } = env;
  const metrics = poolMetrics(env.metrics, env.config, store);
  const upstreams = new Upstreams(o);
  const affinity = new Affinity(store, o, metrics.sticky);
  const failures = new Failures(store, metrics, log, new CredentialChecks(env, upstreams), new PoolNotices(env.notify, store));
  // The session headers the pool reads also reach the upstream (they name the client's own conversation).
  const headers = new HeaderAllowList(o.session_headers);
  const media = {
    maxBytes: o.media_max_bytes, totalBytes: o.media_max_total_bytes || env.config.server.body_limit, timeoutMs: o.media_timeout_ms,
    maxItems: MEDIA_DEFAULTS.maxItems, allowPrivate: o.media_allow_private,
  };
  const signatures = new CallSignatures(store, env.metrics, o.signature_ttl_ms);
  const translate = { env, headers, conversations: new Conversations(store), media, signatures };
  return {
    scheduler: new Scheduler(store, o, metrics), affinity, failures, metrics, env, log,
    exchange: new Exchange(upstreams, o, affinity, failures, log, env.closing, env.kinds),
    cross: (ctx) => {
      reachModel(ctx, env);
      return ctx.upstreamFormat ? TranslatedCrossing.open(ctx, translate) : NativeCrossing.open(ctx, env, headers, o.usage);
    },
    finish: (ctx, account, out, format) => finishOutbound(env, ctx, account, out, format),
  };
}

/** The kind's path, the account's credential and signature on an outbound request; a credential that cannot be had is returned. */
async function finishOutbound(env: Env, ctx: Ctx, account: AccountConfig, out: Outbound, format: FormatAdapter): Promise<Outbound | CredentialFailure> {
  try {
    const done = await finishRequest(env, { platform: ctx.platform!, group: ctx.group!.name, account, format, model: ctx.upstreamModel, stream: ctx.stream },
      { method: ctx.req.method ?? 'GET', path: out.path, headers: out.headers, body: out.body.bytes });
    return { path: done.path, headers: done.headers, body: done.body === out.body.bytes ? out.body : { ...out.body, bytes: done.body } };
  } catch (err) {
    if (err instanceof CredentialFailure) return err;
    throw err;
  }
}

/** No credential to send: the account fails over and cools down with reason `credential` for the refresh's backoff. */
function credentialFailed(f: CredentialFailure): Tried {
  return { done: false, status: 0, verdict: { failover: true, reason: 'credential', cooldownMs: f.retryInMs, cooldownReason: 'credential' } };
}

export class Pool {
  readonly #o: Pick<PoolOptions, 'keepalive_ms' | 'max_switches'>;
  readonly #p: PoolParts;

  constructor(o: Pick<PoolOptions, 'keepalive_ms' | 'max_switches'>, parts: PoolParts) {
    this.#o = o;
    this.#p = parts;
  }

  /** Serves from the request's group, and when none of its accounts could, from its fallback groups in turn. */
  async serve(ctx: Ctx): Promise<void> {
    const trail: Attempt[] = [];
    for (;;) {
      const from = ctx.group!.name;
      try {
        return await this.#serveGroup(ctx, trail);
      } catch (err) {
        if (!exhaustedGroup(err) || !(await fallBack(ctx, this.#p.env, trail))) throw err;
        this.#p.metrics.fallbacks.inc({ from, to: ctx.group!.name });
        this.#p.log.info({ req_id: ctx.id, from, to: ctx.group!.name, code: err.code }, 'request moved to a fallback group');
      }
    }
  }

  /** One group's accounts: `trail` holds every attempt of the request (those of earlier groups name their group). */
  async #serveGroup(ctx: Ctx, trail: Attempt[]): Promise<void> {
    const { scheduler, affinity, failures, exchange, metrics, log } = this.#p;
    const group = ctx.group!;
    const baseModel = ctx.upstreamModel;
    const candidates = candidatesFor(group, baseModel);
    const crossing = await this.#p.cross(ctx);
    if (crossing.local) {
      await admission(ctx);
      return await crossing.local();
    }
    const p = await affinity.preference(ctx, group, candidates, crossing.pins);
    /** Accounts that failed this request (none until a failover: most requests never make this set). */
    let tried: Set<string> | undefined;
    /** This group's attempts, for its refusal's message. */
    const mine = (): Attempt[] => (trail.length && trail[0].group !== undefined ? trail.filter((a) => a.group === undefined) : trail);
    const waiting = queueKeepalive(ctx, this.#o.keepalive_ms);
    /** The pin the first decision found: the conversation lives on that account only. */
    let pin: FoundBinding | undefined;
    for (let n = 0; ; n++) {
      const first = n === 0;
      // One round trip before the upstream call: the admission, the binding lookup and the account decision.
      const acquired = await scheduler.acquire(ctx,
        { group, candidates: tried ? candidates.filter((a) => !tried!.has(a.id)) : candidates, bound: first ? p.bound : undefined, waiting },
        n, first ? admission(ctx) : undefined);
      if (!acquired) { ctx.end('disconnected'); return; }
      if (first) pin = await this.#pinned(p, acquired);
      if (!acquired.ok) throw await failures.refusal(group, candidates, mine(), pin, acquired.reason === 'none' ? 'none' : undefined);
      const lease = acquired.lease;
      const account = candidates.find((a) => a.id === lease.account)!;
      let result: Tried | undefined;
      try {
        ctx.account = account;
        ctx.upstreamModel = accountModel(account, baseModel);
        const out = await this.#p.finish(ctx, account, await crossing.outbound(account), crossing.upstreamFormat);
        result = out instanceof CredentialFailure ? credentialFailed(out) : await exchange.run(ctx, trail, group, account, out, crossing);
      } finally {
        // Not awaited: after an answer, the slot, the success and the bindings reach the store in the same round trip
        // as the settlement that follows.
        scheduler.release(lease, result?.done ? affinity.ending(ctx, p, pin, result.created) : undefined)
          .catch((err) => log.warn({ err, req_id: ctx.id }, 'account release failed'));
      }
      if (result.done) return;
      const failure = await failures.judge(ctx, group, account, result);
      if (failure === 'request') {
        failures.record(ctx, trail, group, account, result.status, 'client_error');
        ctx.end('failed');
        throw requestRefused(result.status);
      }
      await failures.failed(ctx, trail, group, account, failure);
      (tried ??= new Set()).add(account.id);
      if (pin) throw await failures.refusal(group, candidates, mine(), pin, failure);
      if (n >= this.#o.max_switches || tried.size >= candidates.length) throw await failures.refusal(group, candidates, mine(), pin);
      metrics.failovers.inc({ group: group.name, reason: failure.verdict.reason });
    }
  }

  /** The pin the first decision found; a stored object named that is not this key's is refused before anything goes upstream. */
  async #pinned(p: Preference, acquired: NonNullable<Acquired>): Promise<FoundBinding | undefined> {
    const decided = this.#p.affinity.decided(p, acquired);
    if (!(decided instanceof GatewayError)) return decided;
    if (acquired.ok) await this.#p.scheduler.release(acquired.lease);
    throw decided;
  }
}
