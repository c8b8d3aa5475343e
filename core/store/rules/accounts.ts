// Upstream account rules as plain functions over plain data, no I/O: the choice of an account, cool-downs, what a
// success ends. memory/accounts.ts applies them; lua/account-acquire.lua (pick.lua) and account-release.lua in Redis.
import type { AccountCandidate, AcquireAccountRequest, AcquireAccountResult, CooldownReason, FoundBinding } from '../types.ts';

/** An account's state outlives its last use (or cool-down) by this long, then is forgotten: as if never used. */
export const ACCOUNT_IDLE_MS = 86_400_000;

const finite = (n: unknown, d: number): number => (typeof n === 'number' && Number.isFinite(n) ? n : d);

/** Candidates with usable numbers (concurrency ≥ 1 whole, weight ≥ 0), the first of any repeated id. */
export function cleanCandidates(list: AccountCandidate[]): AccountCandidate[] {
  const seen = new Set<string>();
  const out: AccountCandidate[] = [];
  for (const c of list) {
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    out.push({
      id: c.id,
      priority: finite(c.priority, 0),
      weight: Math.max(0, finite(c.weight, 1)),
      concurrency: Math.max(1, Math.floor(finite(c.concurrency, 1))),
    });
  }
  return out;
}

/** What the scheduler knows of one candidate at `now` (expired leases already dropped). */
export interface CandidateView {
  priority: number;
  weight: number;
  /** Effective: 1 while probing. */
  concurrency: number;
  inUse: number;
  /** Cool-down end when it is still in the future, else undefined. */
  coolingUntil?: number;
  /** Last acquisition; undefined = never used (first among equal passes). */
  lastUsed?: number;
  /** Stride scheduling's pass: grows by PASS_STRIDE / weight with every acquisition; undefined = never used. */
  pass?: number;
  /** This request id already holds an unexpired lease here. */
  holds: boolean;
}

export type Pick =
  | {
    take: number; preferred: boolean; /** renew the request's existing lease instead of adding one */ reuse: boolean;
    /** The taken account's new pass (undefined when the lease is reused). */ pass?: number;
  }
  | { refuse: 'busy' | 'cooling' | 'none'; retryAfterMs?: number };

/**
 * Stride scheduling: a pick moves an account's pass on by this ÷ its weight (weight 0 as 1); the lowest pass goes next.
 * Integers, exact in a double (and in Lua) for billions of picks.
 */
export const PASS_STRIDE = 1_000_000;
export const stride = (weight: number): number => (weight > 0 ? Math.floor(PASS_STRIDE / weight + 0.5) : PASS_STRIDE);

/** Passes to compare: a new account joins just before the lowest, one that sat out at most two strides behind the furthest. */
function effectivePasses(views: CandidateView[]): number[] {
  let low = Infinity;
  let high = -Infinity;
  let longest = 0;
  for (const v of views) {
    longest = Math.max(longest, stride(v.weight));
    if (v.pass === undefined) continue;
    low = Math.min(low, v.pass);
    high = Math.max(high, v.pass);
  }
  if (low === Infinity) return views.map(() => -1);
  const join = low - 1;
  const behind = high - 2 * longest;
  return views.map((v) => (v.pass === undefined ? join : Math.max(v.pass, behind)));
}

/** -1: a before b, 1 after, 0 a tie: priority, load, a weight above 0, the lower pass, the least recently used. */
function order(a: CandidateView, pa: number, b: CandidateView, pb: number): number {
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  // Load a.inUse / a.concurrency against b's, cross-multiplied to stay in exact integers.
  const la = a.inUse * b.concurrency;
  const lb = b.inUse * a.concurrency;
  if (la !== lb) return la < lb ? -1 : 1;
  if ((a.weight > 0) !== (b.weight > 0)) return a.weight > 0 ? -1 : 1;
  if (pa !== pb) return pa < pb ? -1 : 1;
  const ua = a.lastUsed ?? -Infinity;
  const ub = b.lastUsed ?? -Infinity;
  if (ua !== ub) return ua < ub ? -1 : 1;
  return 0;
}

/** An index of `weights`, chosen with probability weight / total weight; `roll` is uniform in [0, 1). */
export function weightedChoice(weights: number[], roll: number): number {
  let total = 0;
  for (const w of weights) total += w;
  if (!(total > 0)) return Math.min(weights.length - 1, Math.floor(roll * weights.length));
  const target = roll * total;
  let acc = 0;
  let last = 0;
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] <= 0) continue;
    acc += weights[i];
    last = i;
    if (target < acc) return i;
  }
  return last; // roll * total rounded up to total
}

/**
 * The decision over `views` (`prefer`: an index or -1): a lease held is reused, prefer taken when free (else `only`
 * refuses), else the best free account; or busy, cooling (until the soonest end) or none.
 */
export function pickAccount(views: CandidateView[], prefer: number, only: boolean, now: number, roll: number): Pick {
  const pinned = only && prefer >= 0;
  for (let i = 0; i < views.length; i++) {
    if (views[i].holds && (!pinned || i === prefer)) return { take: i, preferred: i === prefer, reuse: true };
  }
  const passes = effectivePasses(views);
  const taken = (i: number): Pick => ({ take: i, preferred: i === prefer, reuse: false, pass: passes[i] + stride(views[i].weight) });
  const free = (v: CandidateView) => v.coolingUntil === undefined && v.inUse < v.concurrency;
  if (prefer >= 0 && free(views[prefer])) return taken(prefer);
  if (pinned) {
    const p = views[prefer];
    return p.coolingUntil === undefined ? { refuse: 'busy' } : { refuse: 'cooling', retryAfterMs: p.coolingUntil - now };
  }
  let tied: number[] = [];
  for (let i = 0; i < views.length; i++) {
    if (!free(views[i])) continue;
    const cmp = tied.length ? order(views[i], passes[i], views[tied[0]], passes[tied[0]]) : -1;
    if (cmp < 0) tied = [i];
    else if (cmp === 0) tied.push(i);
  }
  if (tied.length) return taken(tied[weightedChoice(tied.map((t) => views[t].weight), roll)]);
  if (!views.length) return { refuse: 'none' };
  let soonest = Infinity;
  for (const v of views) {
    if (v.coolingUntil === undefined) return { refuse: 'busy' };
    soonest = Math.min(soonest, v.coolingUntil - now);
  }
  return { refuse: 'cooling', retryAfterMs: soonest };
}

/** A lease's length as both stores take it: whole milliseconds, at least 1. */
export const leaseLength = (ms: number): number => Math.max(1, Math.round(ms) || 1);

/** A heartbeat's new expiry for a lease (an API key's or an account's) that is still held; an expired one is not revived. */
export const renewed = (exp: number | undefined, now: number, ms: number): number | undefined =>
  (exp !== undefined && exp > now ? now + leaseLength(ms) : undefined);

/** What a store knows of one account (undefined for one never used or forgotten), its expired leases dropped. */
export interface AccountFacts {
  inUse: number;
  /** the asking request holds one of its leases */
  holds: boolean;
  coolUntil?: number;
  reason?: CooldownReason;
  probing: boolean;
  lastUsed?: number;
  pass?: number;
}

/** A candidate as the scheduler sees it at `now`: cooling only until its cool-down's end, one slot while probing. */
function viewOf(c: AccountCandidate, f: AccountFacts | undefined, now: number): CandidateView {
  const cooling = f?.coolUntil !== undefined && f.coolUntil > now;
  return {
    priority: c.priority, weight: c.weight, concurrency: f?.probing ? 1 : c.concurrency, inUse: f?.inUse ?? 0,
    coolingUntil: cooling ? f!.coolUntil : undefined, lastUsed: f?.lastUsed, pass: f?.pass, holds: f?.holds ?? false,
  };
}

/** What an acquisition answers, and the account it takes (its pass moved on unless the request's own lease is renewed). */
export type Choice = { result: AcquireAccountResult; take?: { account: string; reuse: boolean; pass?: number } };

/** The whole decision: a binding's preference (`found`), then pickAccount over the cleaned candidates' facts. */
export function chooseAccount(
  asked: AcquireAccountRequest, found: FoundBinding | undefined, factsOf: (id: string) => AccountFacts | undefined, roll: number,
): Choice {
  const req = withBinding(asked, found);
  const cands = cleanCandidates(req.candidates);
  const { prefer, absent } = preferIndex(req, cands);
  if (absent) return { result: withFound({ ok: false, reason: 'none' }, found) };
  const p = pickAccount(cands.map((c) => viewOf(c, factsOf(c.id), req.now)), prefer, !!req.only, req.now, roll);
  if ('refuse' in p) {
    return { result: withFound({ ok: false, reason: p.refuse, ...(p.retryAfterMs === undefined ? {} : { retryAfterMs: p.retryAfterMs }) }, found) };
  }
  const account = cands[p.take].id;
  return {
    result: withFound({ ok: true, lease: { group: req.group, account, requestId: req.requestId }, preferred: p.preferred }, found),
    take: { account, reuse: p.reuse, pass: p.pass },
  };
}

/** The first of `bound` that has a binding (`lookup` reads one), when the request names no account to prefer itself. */
export function firstBinding(req: AcquireAccountRequest, lookup: (kind: 'sticky' | 'pin', name: string) => string | undefined): FoundBinding | undefined {
  if (req.prefer !== undefined || !req.bound || !req.candidates.length) return undefined;
  for (const { kind, name } of req.bound) {
    const account = lookup(kind, name);
    if (account !== undefined) return { kind, name, account };
  }
  return undefined;
}

/** A cool-down: a later end (with its reason) wins over an earlier one; the account is probed once it ends. */
export function coolDown(f: { coolUntil?: number; reason?: CooldownReason; probing: boolean }, until: number, reason: CooldownReason): void {
  if (f.coolUntil === undefined || until > f.coolUntil) {
    f.coolUntil = until;
    f.reason = reason;
  }
  f.probing = true;
}

/** A success at `at` ends probing, unless the account is still cooling down then (it began before the cool-down). */
export function succeeded(f: { coolUntil?: number; probing: boolean }, at: number): void {
  if (f.coolUntil === undefined || f.coolUntil <= at) f.probing = false;
}

/** The preferred candidate's index (-1: none or not a candidate) and whether `only` refuses at once (not a candidate). */
export function preferIndex(req: AcquireAccountRequest, cands: AccountCandidate[]): { prefer: number; absent: boolean } {
  if (req.prefer === undefined) return { prefer: -1, absent: false };
  const prefer = cands.findIndex((c) => c.id === req.prefer);
  return { prefer, absent: prefer < 0 && !!req.only };
}

/** The request with the binding its `bound` lookup found turned into prefer (and only, for a pin). */
function withBinding(req: AcquireAccountRequest, found: FoundBinding | undefined): AcquireAccountRequest {
  return found ? { ...req, prefer: found.account, only: found.kind === 'pin' } : req;
}

/** The result with the binding found, when there was one. */
const withFound = (result: AcquireAccountResult, found: FoundBinding | undefined): AcquireAccountResult =>
  found ? { ...result, bound: found } : result;
