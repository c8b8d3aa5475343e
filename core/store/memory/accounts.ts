// Upstream accounts in the memory store: leases, cool-downs, probing, last use and bindings in plain maps, with the
// rules of rules/accounts.ts applied to them; everything expires lazily on use.
import type { AccountLease, AccountState, AcquireAccountRequest, AcquireAccountResult, CooldownReason, LeaseEnding } from '../types.ts';
import { ACCOUNT_IDLE_MS, chooseAccount, coolDown, firstBinding, leaseLength, renewed, succeeded, type AccountFacts } from '../rules/accounts.ts';
import { ExpiringMap } from './expiring-map.ts';

/** What outlives a restart of one account's state (file/store.ts): all but its leases (nothing is in flight then). */
export type KeptAccount = Omit<AccountFacts, 'inUse' | 'holds'>;

interface Account extends KeptAccount {
  /** request id -> lease expiry (an ExpiringMap: entries set and deleted per request, expiring-map.ts) */
  leases: ExpiringMap;
  /** No lease expires before this (a lower bound: releases and renewals leave it be); the leases are scanned from then. */
  soonest: number;
}

export interface Binding { account: string; expires: number }

const sep = '\u0000';

export class AccountBook {
  private groups = new Map<string, Map<string, Account>>();
  private bindings = new Map<string, Binding>();
  /** Bindings are swept for expired ones when their number doubles since the last sweep (amortised O(1)). */
  private sweepAt = 1024;

  private account(group: string, id: string, create: true): Account;
  private account(group: string, id: string, create?: false): Account | undefined;
  private account(group: string, id: string, create = false): Account | undefined {
    let g = this.groups.get(group);
    if (!g) {
      if (!create) return undefined;
      this.groups.set(group, (g = new Map()));
    }
    let a = g.get(id);
    // Every field from the start, in one order: an account's object keeps one shape (hidden class) as it is used.
    if (!a && create) {
      g.set(id, (a = { leases: new ExpiringMap(), soonest: Infinity, coolUntil: undefined, reason: undefined, probing: false, lastUsed: undefined, pass: undefined }));
    }
    return a;
  }

  /** Drops expired leases; forgets an account idle past ACCOUNT_IDLE_MS, as its Redis keys would expire. */
  private fresh(group: string, id: string, now: number): Account | undefined {
    const a = this.account(group, id);
    if (!a) return undefined;
    // Scanned only once a lease may have expired (a crashed holder's): live ones are released or renewed before that.
    // Otherwise only the front (the oldest settings) is looked at, which moves past the released ones.
    if (a.soonest <= now) {
      a.leases.prune((exp) => exp <= now, 0);
      let soonest = Infinity;
      for (const exp of a.leases.values()) if (exp < soonest) soonest = exp;
      a.soonest = soonest;
    } else a.leases.prune((exp) => exp <= now);
    const last = Math.max(a.coolUntil ?? -Infinity, a.lastUsed ?? -Infinity);
    if (a.leases.size === 0 && last + ACCOUNT_IDLE_MS <= now) {
      this.groups.get(group)!.delete(id);
      return undefined;
    }
    return a;
  }

  acquire(req: AcquireAccountRequest, roll: number): AcquireAccountResult {
    const { now, requestId, group } = req;
    const found = firstBinding(req, (kind, name) => this.bound(group, kind, name));
    const { result, take } = chooseAccount(req, found, (id) => {
      const a = this.fresh(group, id, now);
      return a && { inUse: a.leases.size, holds: a.leases.has(requestId), coolUntil: a.coolUntil, probing: a.probing, lastUsed: a.lastUsed, pass: a.pass };
    }, roll);
    if (!take) return result;
    const a = this.account(group, take.account, true);
    const exp = now + leaseLength(req.leaseMs);
    a.leases.set(requestId, exp);
    if (exp < a.soonest) a.soonest = exp;
    if (!take.reuse) a.lastUsed = now;
    if (take.pass !== undefined) a.pass = take.pass;
    return result;
  }

  heartbeat(lease: AccountLease, leaseMs: number, now: number): void {
    const a = this.account(lease.group, lease.account);
    const exp = renewed(a?.leases.get(lease.requestId), now, leaseMs);
    if (a && exp !== undefined) a.leases.set(lease.requestId, exp);
  }

  release(lease: AccountLease, ending?: LeaseEnding): void {
    const a = this.account(lease.group, lease.account);
    a?.leases.delete(lease.requestId);
    if (a && ending?.succeededAt !== undefined) succeeded(a, ending.succeededAt);
    for (const b of ending?.bind ?? []) this.bind(lease.group, b.kind, b.name, lease.account, b.ttlMs);
  }

  cooldown(group: string, id: string, until: number, reason: CooldownReason): void {
    coolDown(this.account(group, id, true), until, reason);
  }

  states(group: string, ids: string[], now: number): AccountState[] {
    return ids.map((id) => {
      const a = this.fresh(group, id, now);
      const s: AccountState = { id, inFlight: a?.leases.size ?? 0, probing: a?.probing ?? false };
      if (a?.coolUntil !== undefined && a.coolUntil > now) {
        s.coolingUntil = a.coolUntil;
        if (a.reason) s.reason = a.reason;
      }
      if (a?.lastUsed !== undefined) s.lastUsed = a.lastUsed;
      return s;
    });
  }

  bind(group: string, kind: string, name: string, account: string, ttlMs: number): void {
    const k = group + sep + kind + sep + name;
    this.bindings.delete(k);
    if (!(ttlMs > 0)) return;
    this.bindings.set(k, { account, expires: Date.now() + ttlMs });
    if (this.bindings.size >= this.sweepAt) {
      const clock = Date.now();
      for (const [key, b] of this.bindings) if (b.expires <= clock) this.bindings.delete(key);
      this.sweepAt = Math.max(1024, this.bindings.size * 2);
    }
  }

  /** An account's state to keep (no leases), undefined when it has none (never used, or forgotten). */
  kept(group: string, id: string): KeptAccount | undefined {
    const a = this.account(group, id);
    return a && { coolUntil: a.coolUntil, reason: a.reason, probing: a.probing, lastUsed: a.lastUsed, pass: a.pass };
  }

  restore(group: string, id: string, kept: KeptAccount): void {
    Object.assign(this.account(group, id, true), kept);
  }

  /** A binding as kept, expired or not (the file store drops expired ones itself). */
  keptBinding(group: string, kind: string, name: string): Binding | undefined {
    return this.bindings.get(group + sep + kind + sep + name);
  }

  restoreBinding(group: string, kind: string, name: string, b: Binding): void {
    this.bindings.set(group + sep + kind + sep + name, { account: b.account, expires: b.expires });
  }

  bound(group: string, kind: string, name: string): string | undefined {
    const k = group + sep + kind + sep + name;
    const b = this.bindings.get(k);
    if (!b) return undefined;
    if (b.expires <= Date.now()) {
      this.bindings.delete(k);
      return undefined;
    }
    return b.account;
  }
}
