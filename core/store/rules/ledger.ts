// A key's ledger rules as plain functions over plain data, no I/O: what an admission reserves, a release gives back, a
// settlement swaps and adds. memory/ledger.ts applies them; in Redis admit, release, settle.lua and log-key.lua do.
import type { Admission, AdmitRequest, UsageRecord } from '../types.ts';
import type { Rate } from '../rate.ts';
import { addCounters, emptyCounters, recordCounters, recordDuration, recordTokens, rollupModel, type Counters } from '../rollup.ts';
import {
  DAY_MS, HOLD_MINUTES, HOUR_MS, HOUR_ROLLUP_DAYS, RATE_KEPT_SECONDS, ROLLUP_DAYS, WINDOWS, fromNano, holdNano, minuteOf,
  secondOf, utcDate, type WindowName,
} from '../units.ts';

/** A key's spend windows: when each started (at its first spend after the last one ended) and what it holds (nano). */
export type SpendWindows = Partial<Record<WindowName, { start: number; used: number }>>;

/** A key's counts. Money in nano-dollars; days are UTC dates, hours UTC hours of them. */
export interface Ledger {
  /** minute -> tokens reserved and settled in it */
  tpm: Map<number, number>;
  /** admission minute -> nano-dollars held by the requests in flight admitted then */
  held: Map<number, number>;
  spend: number;
  windows: SpendWindows;
  total: Counters;
  days: Map<string, Counters>;
  dayModels: Map<string, Map<string, Counters>>;
  hours: Map<string, Map<number, Counters>>;
  hourModels: Map<string, Map<number, Map<string, Counters>>>;
  duration: { ms: number; requests: number };
  /** epoch second -> requests and tokens settled in it, the last RATE_KEPT_SECONDS */
  perSecond: Map<number, Rate>;
}

/** What an admission reserved: its tokens in its minute's tpm bucket, its cost (USD) held in that minute's hold. */
export interface Reserved { minute: number; estimatedTokens: number; estimatedCost: number }

/** The admission a request gets: what it reserves, counted as the stores count it (whole tokens, nano-dollars). */
export const admissionOf = (req: AdmitRequest, lease: boolean): Admission => ({
  keyId: req.keyId, requestId: req.requestId, minute: minuteOf(req.now), estimatedTokens: Math.max(0, Math.round(req.estimatedTokens) || 0),
  estimatedCost: fromNano(holdNano(req.estimatedCost)), lease,
});

/** Whether a spend window still runs at `now` (one past its end starts again at the next spend). */
export const windowRuns = (s: { start: number } | undefined, ms: number, now: number): s is { start: number; used: number } =>
  s !== undefined && now < s.start + ms;

/** Whether a hold taken in minute `m` still counts at `minute` (older ones lapse: the holds of a crashed process). */
export const holdCounts = (m: number, minute: number): boolean => m > minute - HOLD_MINUTES;

/** A release is remembered as long as the hold it gave back could count, so a later settlement does not give it twice. */
export const releaseForgotten = (m: number, minute: number): boolean => !holdCounts(m, minute);

function bump<K>(map: Map<K, number>, k: K, n: number): void {
  map.set(k, (map.get(k) ?? 0) + n);
}

/** An admission's tokens (with or without a tpm limit: one set later sees the real rate) and `nano` held in `minute`. */
export function reserve(l: Ledger, minute: number, tokens: number, nano: number): void {
  for (const m of l.tpm.keys()) if (m < minute - 1) l.tpm.delete(m);
  if (tokens > 0) bump(l.tpm, minute, tokens);
  if (nano > 0) bump(l.held, minute, nano);
}

/** Nano-dollars held at `minute` by the admissions whose holds still count; lapsed holds go. */
export function heldAt(l: Ledger, minute: number): number {
  let sum = 0;
  for (const [m, nano] of l.held) {
    if (holdCounts(m, minute)) sum += nano;
    else l.held.delete(m);
  }
  return sum;
}

/** The cost an admission holds goes (a lapsed hold is gone already). */
function unhold(l: Ledger, a: Reserved): void {
  const left = l.held.get(a.minute);
  if (left === undefined) return;
  const rest = left - holdNano(a.estimatedCost);
  if (rest > 0) l.held.set(a.minute, rest);
  else l.held.delete(a.minute);
}

/** A request that ends unsettled gives back its estimate (from a bucket still kept) and its hold. */
export function giveBack(l: Ledger, a: Reserved): void {
  const bucket = l.tpm.get(a.minute);
  if (bucket !== undefined) l.tpm.set(a.minute, bucket - a.estimatedTokens);
  unhold(l, a);
}

/** A settlement's tokens take its estimate's place and its hold goes (after a release both went: all tokens count). */
export function swapReserved(l: Ledger, a: Reserved, tokens: number, released: boolean): void {
  const bucket = l.tpm.get(a.minute);
  if (bucket !== undefined) l.tpm.set(a.minute, bucket + tokens - (released ? 0 : a.estimatedTokens));
  if (!released) unhold(l, a);
}

/** A settled cost counts in each window; a window that ended (or never started) starts again at this settlement. */
export function spendInWindows(windows: SpendWindows, clock: number, cost: number): void {
  for (const w of WINDOWS) {
    const s = windows[w.window];
    if (!s || clock >= s.start + w.ms) windows[w.window] = { start: clock, used: cost };
    else s.used += cost;
  }
}

/** What one record adds to a key's counts, and the day, hour, second and model it counts under. */
export interface Settlement {
  clock: number;
  counters: Counters;
  /** against tpm and in the rate */
  tokens: number;
  duration: number;
  date: string;
  /** UTC hour of `date` */
  hour: number;
  second: number;
  model: string;
}

export function settlementOf(r: UsageRecord): Settlement {
  const clock = Math.floor(r.time);
  return {
    clock, counters: recordCounters(r), tokens: recordTokens(r), duration: recordDuration(r), date: utcDate(clock),
    hour: Math.floor((((clock % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS), second: secondOf(clock), model: rollupModel(r),
  };
}

/** The value of `k`, made when missing. */
export function at<K, V>(map: Map<K, V>, k: K, make: () => V): V {
  let v = map.get(k);
  if (v === undefined) map.set(k, (v = make()));
  return v;
}

/** A new day's entries, and the days more than `keptDays` before it go (ROLLUP_DAYS, HOUR_ROLLUP_DAYS). */
function dayOf<V>(map: Map<string, V>, also: Map<string, unknown>, s: Settlement, keptDays: number, make: () => V): V {
  let v = map.get(s.date);
  if (v !== undefined) return v;
  map.set(s.date, (v = make()));
  const oldest = utcDate(s.clock - keptDays * DAY_MS); // once a day, not per settlement: utcDate keeps one day's text
  for (const d of map.keys()) if (d < oldest) { map.delete(d); also.delete(d); }
  return v;
}

/** A settlement's additions: spend and windows, totals, the day and hour (each per model too), durations, the rate. */
export function addSettlement(l: Ledger, s: Settlement): void {
  const add = s.counters;
  if (add.cost > 0) {
    l.spend += add.cost;
    spendInWindows(l.windows, s.clock, add.cost);
  }
  addCounters(l.total, add);
  addCounters(dayOf(l.days, l.dayModels, s, ROLLUP_DAYS, emptyCounters), add);
  addCounters(at(at(l.dayModels, s.date, () => new Map<string, Counters>()), s.model, emptyCounters), add);
  const hours = dayOf(l.hours, l.hourModels, s, HOUR_ROLLUP_DAYS, () => new Map<number, Counters>());
  addCounters(at(hours, s.hour, emptyCounters), add);
  const byHour = at(l.hourModels, s.date, () => new Map<number, Map<string, Counters>>());
  addCounters(at(at(byHour, s.hour, () => new Map<string, Counters>()), s.model, emptyCounters), add);
  l.duration.ms += s.duration;
  l.duration.requests += 1;
  let rate = l.perSecond.get(s.second);
  if (!rate) {
    for (const sec of l.perSecond.keys()) if (sec <= s.second - RATE_KEPT_SECONDS) l.perSecond.delete(sec);
    l.perSecond.set(s.second, (rate = { requests: 0, tokens: 0 }));
  }
  rate.requests += 1;
  rate.tokens += s.tokens;
}
