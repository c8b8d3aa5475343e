// One key's limits and ledger in the memory store: the limit rules (rules/limits.ts) over its maps, and its rollups.
import type { AdmitRequest, UsageRecord } from '../types.ts';
import { addCounters, emptyCounters, recordCounters, recordDuration, recordTokens, rollupModel, type Counters } from '../rollup.ts';
import {
  concurrencyRefusal, hasUsdLimit, holdCounts, positive, rpmGone, rpmRefusal, spendInWindows, tpmCorrection, tpmRefusal,
  usdRefusal, type Refusal, type SpendWindows,
} from '../rules/limits.ts';
import {
  DAY_MS, HOUR_MS, HOUR_ROLLUP_DAYS, ROLLUP_DAYS, SETTLE_MARKER_MS, SETTLE_MARKERS_PER_KEY, fromNano, holdNano, minuteOf,
  RATE_KEPT_SECONDS, secondOf, utcDate,
} from '../units.ts';
import { ExpiringMap } from './expiring-map.ts';
import { MemoryRecordIndex, type RecordEntry, type RecordText } from './record-index.ts';
import type { Rate } from '../rate.ts';

function modelCounters(models: Map<string, Counters>, model: string): Counters {
  let m = models.get(model);
  if (!m) models.set(model, (m = emptyCounters()));
  return m;
}

export class KeyLedger {
  // request id -> lease expiry (an ExpiringMap, not a Map: a Map set and deleted per request reallocated its table
  // every few dozen requests, and the collector copied each new table out of the young generation)
  leases = new ExpiringMap();
  rpm = new ExpiringMap(); // request id -> admitted at
  tpm = new Map<number, number>(); // minute -> reserved + actual tokens
  held = new Map<number, number>(); // admission minute -> nano-dollars held by requests in flight (HOLD_MINUTES)
  spend = 0; // lifetime, nano-dollars
  windows: SpendWindows = {};
  total: Counters = emptyCounters();
  days = new Map<string, Counters>();
  dayModels = new Map<string, Map<string, Counters>>();
  // UTC date -> UTC hour -> counters (and per model): what usage days in other time zones are made of.
  hours = new Map<string, Map<number, Counters>>();
  hourModels = new Map<string, Map<number, Map<string, Counters>>>();
  duration = { ms: 0, requests: 0 };
  /** Requests and tokens settled per epoch second, the last few minutes (rate.ts). */
  perSecond = new Map<number, Rate>();
  readonly records: MemoryRecordIndex;
  // Insertion-ordered with roughly increasing expiry, so expired markers are pruned from the front.
  private done = new ExpiringMap();
  private released = new ExpiringMap(); // request id -> admission minute (see release())

  /** `text` reads back the records whose text the store let go (the file store's). */
  constructor(text?: RecordText) {
    this.records = new MemoryRecordIndex(text, true);
  }

  /** Refusal, or undefined when every limit has room; reserves nothing. Same order and rules as lua/admit-many.lua. */
  check(req: AdmitRequest): Refusal | undefined {
    const { now, limits: l, requestId: id } = req;
    if (hasUsdLimit(l)) {
      const usd = usdRefusal(l, this.spend, this.windows, this.heldAt(minuteOf(now)), now);
      if (usd) return usd;
    }
    const conc = positive(l.concurrency);
    // Leases and rpm entries expire mostly in insertion order: the front is pruned per request, the whole map
    // only when it looks full (exact either way, and O(1) amortised while a key is under its limits).
    if (conc > 0) {
      const held = this.leases.prune((exp) => exp <= now, conc);
      if (held >= conc && !this.leases.has(id)) {
        let earliest = Infinity;
        for (const exp of this.leases.values()) earliest = Math.min(earliest, exp);
        return concurrencyRefusal(earliest, now);
      }
    }
    const rpm = positive(l.rpm);
    if (rpm > 0) {
      const made = this.rpm.prune((at) => rpmGone(at, now), rpm);
      if (made >= rpm && !this.rpm.has(id)) {
        let oldest = Infinity;
        for (const at of this.rpm.values()) oldest = Math.min(oldest, at);
        return rpmRefusal(oldest, now);
      }
    }
    const tpm = positive(l.tpm);
    return tpm > 0 ? tpmRefusal(this.tpm.get(minuteOf(now)) ?? 0, req.estimatedTokens, tpm, now) : undefined;
  }

  reserve(req: AdmitRequest): { lease: boolean; estimatedTokens: number; estimatedCost: number } {
    const { now, requestId: id, limits: l } = req;
    const lease = positive(l.concurrency) > 0;
    if (lease) this.leases.set(id, now + req.leaseMs);
    if (positive(l.rpm) > 0) this.rpm.set(id, now);
    const minute = minuteOf(now);
    for (const m of this.tpm.keys()) if (m < minute - 1) this.tpm.delete(m);
    this.released.prune((m) => m < minute - 5);
    const est = Math.max(0, Math.round(req.estimatedTokens) || 0);
    // Tokens are counted even without a tpm limit, so a limit set later sees the real rate at once.
    if (est > 0) this.tpm.set(minute, (this.tpm.get(minute) ?? 0) + est);
    const cost = holdNano(req.estimatedCost);
    if (cost > 0) this.held.set(minute, (this.held.get(minute) ?? 0) + cost);
    return { lease, estimatedTokens: est, estimatedCost: fromNano(cost) };
  }

  /** Nano-dollars held by requests admitted in the last HOLD_MINUTES; older holds lapse and go (as lua/held.lua's). */
  private heldAt(minute: number): number {
    let sum = 0;
    for (const [m, nano] of this.held) {
      if (holdCounts(m, minute)) sum += nano;
      else this.held.delete(m);
    }
    return sum;
  }

  /** The cost an admission holds goes: at its settlement or release (a lapsed hold is gone already). */
  private unhold(a: { minute: number; estimatedCost: number }): void {
    const left = this.held.get(a.minute);
    if (left === undefined) return;
    const rest = left - holdNano(a.estimatedCost);
    if (rest > 0) this.held.set(a.minute, rest);
    else this.held.delete(a.minute);
  }

  heartbeat(requestId: string, leaseMs: number, now: number): void {
    const exp = this.leases.get(requestId);
    if (exp !== undefined && exp > now) this.leases.set(requestId, now + leaseMs);
  }

  /** Gives back the lease, the tpm estimate and the cost held of a request that ends unsettled; once, never after settle. */
  release(a: { requestId: string; minute: number; estimatedTokens: number; estimatedCost: number }): void {
    if (this.done.has(a.requestId) || this.released.has(a.requestId)) return;
    this.released.set(a.requestId, a.minute);
    this.leases.delete(a.requestId);
    const bucket = this.tpm.get(a.minute);
    if (bucket !== undefined) this.tpm.set(a.minute, bucket - a.estimatedTokens);
    this.unhold(a);
  }

  /** True when the request id was settled already (its marker, or its record while kept); prunes expired markers. */
  settled(requestId: string, clock: number): boolean {
    this.done.prune((exp) => exp <= clock);
    return this.done.has(requestId) || this.records.has(requestId);
  }

  settle(
    r: UsageRecord,
    admission: { requestId: string; minute: number; estimatedTokens: number; estimatedCost: number } | undefined,
    opts: { retentionMs: number; recordsPerKey: number },
    entry: RecordEntry,
  ): void {
    const clock = Math.floor(r.time);
    this.done.set(r.request_id, clock + Math.min(opts.retentionMs, SETTLE_MARKER_MS));
    if (this.done.size > SETTLE_MARKERS_PER_KEY) this.done.dropOldest();
    if (admission) {
      this.leases.delete(admission.requestId);
      const bucket = this.tpm.get(admission.minute);
      // After a release the estimate has left the bucket already: add every actual token.
      const released = this.released.has(admission.requestId);
      if (bucket !== undefined) this.tpm.set(admission.minute, bucket + tpmCorrection(recordTokens(r), admission.estimatedTokens, released));
      // The actual cost is added to the spend below, in place of what was held.
      if (!released) this.unhold(admission);
    }
    const add = recordCounters(r);
    if (add.cost > 0) {
      this.spend += add.cost;
      spendInWindows(this.windows, clock, add.cost);
    }
    addCounters(this.total, add);
    const date = utcDate(clock);
    let day = this.days.get(date);
    if (!day) {
      this.days.set(date, (day = emptyCounters()));
      const oldest = utcDate(clock - ROLLUP_DAYS * DAY_MS);
      for (const d of this.days.keys()) if (d < oldest) { this.days.delete(d); this.dayModels.delete(d); }
    }
    addCounters(day, add);
    let models = this.dayModels.get(date);
    if (!models) this.dayModels.set(date, (models = new Map()));
    const model = rollupModel(r);
    addCounters(modelCounters(models, model), add);
    this.rollHour(date, clock, model, add);
    this.duration.ms += recordDuration(r);
    this.duration.requests += 1;
    this.countSecond(clock, recordTokens(r));
    this.records.add(entry, opts.recordsPerKey, clock - opts.retentionMs);
  }

  /** The per-second counts of settle-many.lua (rate:), kept three minutes. */
  private countSecond(clock: number, tokens: number): void {
    const second = secondOf(clock);
    let r = this.perSecond.get(second);
    if (!r) {
      for (const s of this.perSecond.keys()) if (s <= second - RATE_KEPT_SECONDS) this.perSecond.delete(s);
      this.perSecond.set(second, (r = { requests: 0, tokens: 0 }));
    }
    r.requests += 1;
    r.tokens += tokens;
  }

  /** The hourly rollups of settle-many.lua (hr:, hm:), kept HOUR_ROLLUP_DAYS. */
  private rollHour(date: string, clock: number, model: string, add: Counters): void {
    let hours = this.hours.get(date);
    if (!hours) {
      this.hours.set(date, (hours = new Map()));
      const oldest = utcDate(clock - HOUR_ROLLUP_DAYS * DAY_MS);
      for (const d of this.hours.keys()) if (d < oldest) { this.hours.delete(d); this.hourModels.delete(d); }
    }
    const hour = Math.floor((((clock % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS); // of `date`, the UTC day of clock
    let h = hours.get(hour);
    if (!h) hours.set(hour, (h = emptyCounters()));
    addCounters(h, add);
    let byHour = this.hourModels.get(date);
    if (!byHour) this.hourModels.set(date, (byHour = new Map()));
    let models = byHour.get(hour);
    if (!models) byHour.set(hour, (models = new Map()));
    addCounters(modelCounters(models, model), add);
  }
}
