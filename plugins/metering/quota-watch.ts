// key.quota: which keys reached a share (notifications.quota_percents) of a USD limit. A key is looked at after its
// settlements that cost something, at most once a second (the last settlement is always looked at), with the same
// read /v1/usage makes; each share of each limit is told once per key, limit value and window, across processes.
import type { Env, KeyConfig } from '../../core/types.ts';
import type { KeyLimits } from '../../core/store/types.ts';
import { usageView } from '../usage.ts';

/** A key's usage is read at most this often (per process) for its notices. */
const CHECK_MS = 1000;
/** Keys looked at (waiting, or remembered for CHECK_MS) at most; past it a key waits for its next settlement. */
const WATCHED = 10_000;
/** A lifetime quota's share is told once for as long as rollups are kept (the claim's life). */
const QUOTA_CLAIM_MS = 400 * 86_400_000;

const USD: (keyof KeyLimits)[] = ['quota_usd', 'usd_5h', 'usd_1d', 'usd_7d'];

interface Reached { limit: string; limitUsd: number; usedUsd: number; windowStart: string | null; resetAt: string | null }

/** Each USD limit of the key with what it used (the window's, or the lifetime's), as /v1/usage shows them. */
function limitsOf(view: ReturnType<typeof usageView>): Reached[] {
  const out: Reached[] = [];
  if (view.quota) out.push({ limit: 'quota_usd', limitUsd: view.quota.limit, usedUsd: view.quota.used, windowStart: null, resetAt: null });
  for (const w of view.rate_limits ?? []) {
    out.push({ limit: `usd_${w.window}`, limitUsd: w.limit, usedUsd: w.used, windowStart: w.window_start, resetAt: w.reset_at ?? null });
  }
  return out;
}

export class QuotaWatch {
  readonly #due = new Map<string, { key: KeyConfig; env: Env }>();
  readonly #lastAt = new Map<string, number>();

  /** After a settlement of `key` that cost something. */
  settled(key: KeyConfig, env: Env): void {
    if (!USD.some((l) => key.limits[l]) || !env.notify?.wants('key.quota')) return;
    const due = this.#due.get(key.id);
    if (due) { due.key = key; due.env = env; return; }
    if (this.#due.size >= WATCHED) return;
    this.#due.set(key.id, { key, env });
    const wait = Math.max(0, (this.#lastAt.get(key.id) ?? -Infinity) + CHECK_MS - Date.now());
    setTimeout(() => void this.#check(key.id), wait).unref();
  }

  async #check(id: string): Promise<void> {
    const { key, env } = this.#due.get(id)!;
    this.#due.delete(id);
    const now = Date.now();
    this.#lastAt.delete(id);
    this.#lastAt.set(id, now);
    for (const oldest of this.#lastAt.keys()) {
      if (this.#lastAt.size <= WATCHED) break;
      this.#lastAt.delete(oldest);
    }
    const usage = await env.store.keyUsage(id, { days: 1, now }).catch(() => undefined);
    if (!usage) return; // the store is away: the next settlement looks again
    for (const r of limitsOf(usageView(key, key.group, usage, now))) {
      for (const percent of env.config.notifications.quota_percents) {
        if (r.usedUsd < r.limitUsd * percent / 100) continue;
        const ttlMs = r.resetAt ? Math.max(1000, Date.parse(r.resetAt) - now) : QUOTA_CLAIM_MS;
        env.notify!.emit({
          event: 'key.quota', subject: key.id,
          once: { name: `key.quota:${key.id}:${r.limit}:${percent}:${r.limitUsd}:${r.windowStart ?? ''}`, ttlMs },
          data: {
            key_id: key.id, group: key.group, limit: r.limit, percent, limit_usd: r.limitUsd, used_usd: r.usedUsd,
            used_percent: Math.round(r.usedUsd / r.limitUsd * 1000) / 10, window_start: r.windowStart, reset_at: r.resetAt,
          },
        });
      }
    }
  }
}
