// What the pool tells the operator's webhooks (core/notify): an account whose credential was refused, and a group
// whose every enabled account is cooling down. Ids, states and times only: never a credential.
import type { Notify } from '../../core/notify/events.ts';
import type { Store } from '../../core/store/types.ts';
import type { AccountConfig, GroupConfig } from '../../core/types.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export class PoolNotices {
  readonly #notify: Notify | undefined;
  readonly #store: Pick<Store, 'accountStates'>;

  constructor(notify: Notify | undefined, store: Pick<Store, 'accountStates'>) {
    this.#notify = notify;
    this.#store = store;
  }

  /** Sent once per pause, whichever process saw the refusal (the pause ends it: a refusal after it is news again). */
  attention(group: GroupConfig, account: AccountConfig, status: number, pauseMs: number): void {
    const until = Date.now() + pauseMs;
    this.#notify?.emit({
      event: 'account.attention', subject: `${group.name}/${account.id}`,
      once: { name: `account.attention:${group.name}:${account.id}`, ttlMs: pauseMs },
      data: { group: group.name, account: account.id, status, paused_until: iso(until) },
    });
  }

  /**
   * After an account cooled down: when every enabled account of its group is cooling down too, the group is exhausted,
   * sent once until the first of them returns.
   */
  async cooled(group: GroupConfig): Promise<void> {
    if (!this.#notify?.wants('group.exhausted')) return;
    const ids = group.accounts.filter((a) => a.enabled).map((a) => a.id);
    const now = Date.now();
    const states = ids.length ? await this.#store.accountStates(group.name, ids, now).catch(() => []) : [];
    if (!states.length || states.some((s) => s.coolingUntil === undefined)) return;
    const returns = Math.min(...states.map((s) => s.coolingUntil!));
    this.#notify.emit({
      event: 'group.exhausted', subject: group.name,
      once: { name: `group.exhausted:${group.name}`, ttlMs: Math.max(1000, returns - now) },
      data: {
        group: group.name, returns_at: iso(returns),
        accounts: states.map((s) => ({ id: s.id, reason: s.reason ?? null, cooling_until: iso(s.coolingUntil!) })),
      },
    });
  }
}
