// Failure bookkeeping of the pool: every attempt recorded (ctx.attempts and metrics), a failed account cooled down by
// the classifier's verdict, a refused credential told apart from a refused request, and the answer when no account
// could serve the request.
import type { Logger } from 'pino';
import type { GatewayError } from '../../core/errors.ts';
import type { AccountConfig, Attempt, Ctx, GroupConfig } from '../../core/types.ts';
import type { FoundBinding, Store } from '../../core/store/types.ts';
import type { Verdict } from './classify.ts';
import type { CredentialVerdict } from './credential-check.ts';
import { conversationUnavailable, exhausted } from './pool-errors.ts';
import type { PoolMetrics } from './pool-metrics.ts';
import type { PoolNotices } from './pool-notices.ts';

/** An account failed before the first byte: how (classified), its status (0: no answer), the socket error code. */
export interface Failed { done: false; verdict: Verdict; status: number; code?: string }

/** Whose a 401/403 was: the credential's, the request's, or no telling (credential-check.ts). */
export interface CredentialJudge { whose(ctx: Ctx, group: GroupConfig, account: AccountConfig): Promise<CredentialVerdict> }

/** Attempt endings where no answer came: connection refused or failed, or no response headers in time. */
const UNREACHABLE = new Set<string>(['unreachable', 'timeout']);

export class Failures {
  readonly #store: Pick<Store, 'cooldown' | 'accountStates'>;
  readonly #metrics: Pick<PoolMetrics, 'attempts' | 'attention'>;
  readonly #log: Logger;
  readonly #credentials: CredentialJudge;
  readonly #notices: PoolNotices | undefined;

  constructor(store: Pick<Store, 'cooldown' | 'accountStates'>, metrics: Pick<PoolMetrics, 'attempts' | 'attention'>, log: Logger, credentials: CredentialJudge, notices?: PoolNotices) {
    this.#store = store;
    this.#metrics = metrics;
    this.#log = log;
    this.#credentials = credentials;
    this.#notices = notices;
  }

  /** Every attempt goes into metrics; the list reaches ctx.attempts (and the usage record) once there is more than a clean one. */
  record(ctx: Ctx, trail: Attempt[], group: GroupConfig, account: AccountConfig, status: number, reason: string): void {
    trail.push({ account: account.id, status, reason });
    if ((reason !== 'ok' && reason !== 'client_error') || trail.length > 1) ctx.attempts = trail;
    this.#metrics.attempts.inc({ group: group.name, account: account.id, reason });
  }

  /**
   * A 401/403 pauses the account only when its credential is shown to be at fault; when the credential works, the
   * request itself was refused ('request'): it gets its error and no account moves. When there is no telling, the
   * request moves on but the account is not paused.
   */
  async judge(ctx: Ctx, group: GroupConfig, account: AccountConfig, f: Failed): Promise<Failed | 'request'> {
    if (f.verdict.reason !== 'auth') return f;
    const whose = await this.#credentials.whose(ctx, group, account);
    if (whose === 'valid') return 'request';
    return whose === 'refused' ? f : { ...f, verdict: { ...f.verdict, cooldownMs: 0 } };
  }

  /** A failed attempt: recorded, the account cooled down, a refused credential flagged for an operator. */
  async failed(ctx: Ctx, trail: Attempt[], group: GroupConfig, account: AccountConfig, f: Failed): Promise<void> {
    const { verdict, status } = f;
    this.record(ctx, trail, group, account, status, verdict.reason);
    // An upstream that cannot be reached is the operator's to look at; a refusal (429, 5xx) is routine for a pool.
    const level = UNREACHABLE.has(verdict.reason) ? 'warn' : 'info';
    this.#log[level]({ req_id: ctx.id, group: group.name, account: account.id, status, reason: verdict.reason, code: f.code, cooldown_ms: verdict.cooldownMs }, 'upstream attempt failed');
    if (verdict.cooldownMs > 0) {
      await this.#store.cooldown(group.name, account.id, Date.now() + verdict.cooldownMs, verdict.cooldownReason)
        .catch((err) => this.#log.warn({ err, req_id: ctx.id }, 'account cool-down failed'));
      // Not awaited: whether the whole group is now cooling is the operator's news, not this request's business.
      void this.#notices?.cooled(group);
    }
    if (verdict.reason === 'auth' && verdict.cooldownMs > 0) {
      this.#metrics.attention.inc({ group: group.name, account: account.id });
      this.#log.warn({ req_id: ctx.id, group: group.name, account: account.id, pause_ms: verdict.cooldownMs },
        `upstream account "${account.id}" of group "${group.name}" was refused (401/403): its credential needs attention`);
      this.#notices?.attention(group, account, status, verdict.cooldownMs);
    }
  }

  /** The answer when no account could be had (or the pinned one failed): by class, or the conversation's own error. */
  async refusal(group: GroupConfig, candidates: readonly AccountConfig[], trail: Attempt[], pin: FoundBinding | undefined, why?: Failed | 'none'): Promise<GatewayError> {
    const now = Date.now();
    if (pin === undefined) return exhausted(group, trail, await this.#store.accountStates(group.name, candidates.map((a) => a.id), now), now);
    if (why === 'none') return conversationUnavailable(pin.name, 'gone', now);
    const [state] = await this.#store.accountStates(group.name, [pin.account], now);
    // A failure without a cool-down (a 5xx, error_ms 0) still says why.
    return conversationUnavailable(pin.name, why && !state.coolingUntil ? { ...state, reason: why.verdict.cooldownReason } : state, now);
  }
}
