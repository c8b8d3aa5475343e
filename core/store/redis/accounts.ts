// Upstream accounts in Redis: every decision is one Lua script over the group's keys ({g:<group>}, one slot),
// so every gateway process sees the same leases, cool-downs and bindings (layout in keys.ts).
import type {
  AccountLease, AccountState, AcquireAccountRequest, AcquireAccountResult, CooldownReason, FoundBinding, LeaseEnding,
} from '../types.ts';
import { ACCOUNT_IDLE_MS, cleanCandidates, leaseLength, preferIndex } from '../rules/accounts.ts';
import { scripts, type RedisClient } from '../lua/index.ts';
import type { KeyLayout } from './keys.ts';

/** account-acquire.lua's arguments (`prefer` 1-based, 0: none); what a group's requests share is one text (its terms). */
export function acquireArgs(a: {
  now: number; id: string; prefer: number; only: boolean; roll: number; pins: boolean[]; leaseMs: number; stateTtlMs: number;
  cands: { id: string; priority: number; weight: number; concurrency: number }[];
}): (string | number)[] {
  const pinMask = a.pins.reduce((m, pin, j) => (pin ? m + 2 ** j : m), 0);
  const terms = [a.prefer, a.only ? 1 : 0, a.pins.length, pinMask, a.leaseMs, a.stateTtlMs, ...a.cands.flatMap((c) => [c.priority, c.weight, c.concurrency])];
  return [Math.floor(a.now), a.id, a.roll, terms.join(' '), ...a.cands.map((c) => c.id)];
}

export class RedisAccounts {
  private readonly client: RedisClient;
  private readonly layout: KeyLayout;

  constructor(client: RedisClient, layout: KeyLayout) {
    this.client = client;
    this.layout = layout;
  }

  async acquire(req: AcquireAccountRequest): Promise<AcquireAccountResult> {
    const cands = cleanCandidates(req.candidates);
    const { prefer, absent } = preferIndex(req, cands);
    // Nothing to decide (and no key to route a Cluster call by).
    if (absent || !cands.length) return { ok: false, reason: 'none' };
    const g = this.layout.group(req.group);
    // The binding lookup rides in the same script (same slot): no round trip of its own.
    const bound = req.prefer === undefined && req.bound ? req.bound : [];
    const bindingKeys = bound.map((b) => g.bound(b.kind, b.name));
    const r = (await scripts.accountAcquire.run(this.client, [...cands.flatMap((c) => [g.lease(c.id), g.state(c.id)]), ...bindingKeys], acquireArgs({
      // The roll matters only among several candidates (one alone sends the same short text each time).
      now: req.now, id: req.requestId, prefer: prefer + 1, only: !!req.only, roll: cands.length > 1 ? Math.random() : 0,
      pins: bound.map((b) => b.kind === 'pin'), leaseMs: leaseLength(req.leaseMs), stateTtlMs: ACCOUNT_IDLE_MS, cands,
    }))) as number | [number, number | string, number, number, string];
    // account-acquire.lua: 2 * candidate + preferred when no binding was found, else a list.
    if (typeof r === 'number') {
      const account = cands[(r >> 1) - 1].id;
      return { ok: true, lease: { group: req.group, account, requestId: req.requestId }, preferred: (r & 1) === 1 };
    }
    const found: FoundBinding | undefined = r[3] > 0 ? { ...bound[r[3] - 1], account: r[4] } : undefined;
    const extra = found ? { bound: found } : {};
    if (r[0] === 1) {
      const account = cands[(r[1] as number) - 1].id;
      return { ok: true, lease: { group: req.group, account, requestId: req.requestId }, preferred: r[2] === 1, ...extra };
    }
    const reason = r[1] as 'busy' | 'cooling' | 'none';
    return { ok: false, reason, ...(r[2] >= 0 ? { retryAfterMs: r[2] } : {}), ...extra };
  }

  async heartbeat(lease: AccountLease, leaseMs: number, now: number): Promise<void> {
    // The same rule as an API key's lease: renew only what is still held.
    await scripts.heartbeat.run(this.client, [this.layout.group(lease.group).lease(lease.account)],
      [Math.floor(now), lease.requestId, leaseLength(leaseMs)]);
  }

  async release(lease: AccountLease, ending?: LeaseEnding): Promise<void> {
    const g = this.layout.group(lease.group);
    if (ending?.succeededAt === undefined && !ending?.bind?.length) {
      await this.client.zrem(g.lease(lease.account), lease.requestId);
      return;
    }
    const binds = ending.bind ?? [];
    await scripts.accountRelease.run(this.client,
      [g.lease(lease.account), g.state(lease.account), ...binds.map((b) => g.bound(b.kind, b.name))],
      [lease.requestId, ending.succeededAt === undefined ? '' : Math.floor(ending.succeededAt), lease.account, ...binds.map((b) => leaseLength(b.ttlMs))]);
  }

  async cooldown(group: string, account: string, until: number, reason: CooldownReason): Promise<void> {
    // The key must outlive the cool-down and then the idle time. `until` is on the caller's clock, which is
    // the wall clock in production (a test's fake clock only makes the key live ACCOUNT_IDLE_MS).
    const keep = Math.max(0, Math.floor(until) - Date.now()) + ACCOUNT_IDLE_MS;
    await scripts.accountCooldown.run(this.client, [this.layout.group(group).state(account)], [Math.floor(until), reason, keep]);
  }

  async states(group: string, accounts: string[], now: number): Promise<AccountState[]> {
    if (!accounts.length) return [];
    const g = this.layout.group(group);
    const r = (await scripts.accountStates.run(this.client, accounts.flatMap((a) => [g.lease(a), g.state(a)]),
      [Math.floor(now)])) as (number | string | null)[];
    return accounts.map((id, i) => {
      const [inFlight, cool, why, probe, used] = r.slice(i * 5, i * 5 + 5);
      const s: AccountState = { id, inFlight: Number(inFlight), probing: probe === '1' };
      if (cool !== null && Number(cool) > now) {
        s.coolingUntil = Number(cool);
        if (why !== null) s.reason = why as CooldownReason;
      }
      if (used !== null) s.lastUsed = Number(used);
      return s;
    });
  }

  async bind(group: string, kind: string, name: string, account: string, ttlMs: number): Promise<void> {
    const key = this.layout.group(group).bound(kind, name);
    if (ttlMs > 0) await this.client.set(key, account, 'PX', leaseLength(ttlMs));
    else await this.client.del(key);
  }

  async bound(group: string, kind: string, name: string): Promise<string | undefined> {
    return (await this.client.get(this.layout.group(group).bound(kind, name))) ?? undefined;
  }
}
