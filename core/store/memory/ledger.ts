// One key's limits and ledger in the memory store: its maps, with the limit checks (rules/limits.ts) and the ledger
// rules (rules/ledger.ts) applied to them, and the markers that make a settlement or a release count once.
import type { Admission, AdmitRequest, UsageRecord } from '../types.ts';
import { emptyCounters, type Counters } from '../rollup.ts';
import {
  addSettlement, giveBack, heldAt, releaseForgotten, reserve, swapReserved, type Ledger, type Reserved, type Settlement,
  type SpendWindows,
} from '../rules/ledger.ts';
import {
  concurrencyRefusal, hasUsdLimit, positive, rpmGone, rpmRefusal, tpmRefusal, usdRefusal, type Refusal,
} from '../rules/limits.ts';
import { leaseLength, renewed } from '../rules/accounts.ts';
import { SETTLE_MARKER_MS, SETTLE_MARKERS_PER_KEY, holdNano, minuteOf } from '../units.ts';
import { ExpiringMap } from './expiring-map.ts';
import { MemoryRecordIndex, type RecordEntry, type RecordText } from './record-index.ts';
import type { Rate } from '../rate.ts';

/** The earliest of an expiring map's times (a refusal's retry-after). */
function earliest(m: ExpiringMap): number {
  let low = Infinity;
  for (const t of m.values()) low = Math.min(low, t);
  return low;
}

export class KeyLedger implements Ledger {
  // ExpiringMaps, not Maps: entries set and deleted per request leave from the front in O(1) (expiring-map.ts).
  leases = new ExpiringMap(); // request id -> lease expiry
  rpm = new ExpiringMap(); // request id -> admitted at
  tpm = new Map<number, number>();
  held = new Map<number, number>();
  spend = 0;
  windows: SpendWindows = {};
  total: Counters = emptyCounters();
  days = new Map<string, Counters>();
  dayModels = new Map<string, Map<string, Counters>>();
  hours = new Map<string, Map<number, Counters>>();
  hourModels = new Map<string, Map<number, Map<string, Counters>>>();
  duration = { ms: 0, requests: 0 };
  perSecond = new Map<number, Rate>();
  readonly records: MemoryRecordIndex;
  private done = new ExpiringMap(); // request id -> settle marker expiry
  private released = new ExpiringMap(); // request id -> admission minute

  /** `text` reads back the records whose text the store let go (the file store's). */
  constructor(text?: RecordText) {
    this.records = new MemoryRecordIndex(text, true);
  }

  /** Refusal, or undefined when every limit has room; reserves nothing. Same order and rules as lua/admit.lua. */
  check(req: AdmitRequest): Refusal | undefined {
    const { now, limits: l, requestId: id } = req;
    if (hasUsdLimit(l)) {
      const usd = usdRefusal(l, this.spend, this.windows, heldAt(this, minuteOf(now)), now);
      if (usd) return usd;
    }
    // Leases and rpm entries expire mostly in insertion order: the front is pruned per request, the whole map only
    // when it looks full (exact either way).
    const conc = positive(l.concurrency);
    if (conc > 0 && this.leases.prune((exp) => exp <= now, conc) >= conc && !this.leases.has(id)) {
      return concurrencyRefusal(earliest(this.leases), now);
    }
    const rpm = positive(l.rpm);
    if (rpm > 0 && this.rpm.prune((at) => rpmGone(at, now), rpm) >= rpm && !this.rpm.has(id)) {
      return rpmRefusal(earliest(this.rpm), now);
    }
    const tpm = positive(l.tpm);
    return tpm > 0 ? tpmRefusal(this.tpm.get(minuteOf(now)) ?? 0, req.estimatedTokens, tpm, now) : undefined;
  }

  reserve(req: AdmitRequest, a: Admission): void {
    if (a.lease) this.leases.set(a.requestId, req.now + leaseLength(req.leaseMs));
    if (positive(req.limits.rpm) > 0) this.rpm.set(a.requestId, req.now);
    this.released.prune((m) => releaseForgotten(m, a.minute));
    reserve(this, a.minute, a.estimatedTokens, holdNano(req.estimatedCost));
  }

  heartbeat(requestId: string, leaseMs: number, now: number): void {
    const exp = renewed(this.leases.get(requestId), now, leaseMs);
    if (exp !== undefined) this.leases.set(requestId, exp);
  }

  /** Gives back the lease and what admit reserved for a request that ends unsettled; once, never after settle. */
  release(a: Reserved & { requestId: string }): void {
    if (this.done.has(a.requestId) || this.released.has(a.requestId)) return;
    this.released.set(a.requestId, a.minute);
    this.leases.delete(a.requestId);
    giveBack(this, a);
  }

  /** True when the request id was settled already (its marker, or its record while kept); prunes expired markers. */
  settled(requestId: string, clock: number): boolean {
    this.done.prune((exp) => exp <= clock);
    return this.done.has(requestId) || this.records.has(requestId);
  }

  settle(
    r: UsageRecord, s: Settlement, admission: (Reserved & { requestId: string }) | undefined,
    opts: { retentionMs: number; recordsPerKey: number }, entry: RecordEntry,
  ): void {
    this.done.set(r.request_id, s.clock + Math.min(opts.retentionMs, SETTLE_MARKER_MS));
    if (this.done.size > SETTLE_MARKERS_PER_KEY) this.done.dropOldest();
    if (admission) {
      this.leases.delete(admission.requestId);
      swapReserved(this, admission, s.tokens, this.released.has(admission.requestId));
    }
    addSettlement(this, s);
    this.records.add(entry, opts.recordsPerKey, s.clock - opts.retentionMs);
  }
}
