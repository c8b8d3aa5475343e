// Units and clocks both stores share: nano-dollar money, window lengths, minute buckets, UTC day and hour names.

/** Money as integer nano-dollars, so sums are exact (2^53 of them is about 9 million USD). */
export const NANO = 1e9;
export const toNano = (usd: number | undefined): number =>
  typeof usd === 'number' && Number.isFinite(usd) ? Math.round(usd * NANO) : 0;
export const fromNano = (nano: number): number => nano / NANO;
/** The most one request holds against the USD limits (a million USD): sums of holds stay exact integers. */
export const MAX_HOLD_NANO = 1e15;
/** Nano-dollars an estimated cost holds: none for a non-positive or non-number one, at most MAX_HOLD_NANO. */
export const holdNano = (usd: number | undefined): number =>
  typeof usd === 'number' && usd > 0 ? Math.min(MAX_HOLD_NANO, Math.round(usd * NANO)) : 0;

export const WINDOWS = [
  { window: '5h', ms: 5 * 3_600_000 },
  { window: '1d', ms: 24 * 3_600_000 },
  { window: '7d', ms: 7 * 24 * 3_600_000 },
] as const;
export type WindowName = (typeof WINDOWS)[number]['window'];

export const RPM_WINDOW_MS = 60_000;
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Daily and per-model rollups (and per-key totals) outlive the records: /v1/usage shows up to 400 days. */
export const ROLLUP_DAYS = 400;
/** Hourly rollups (days in other time zones) cover the longest daily_usage (90 days) and a day on either side. */
export const HOUR_ROLLUP_DAYS = 92;
/** A full concurrency pool: come back after at most this long (settle frees a slot before its lease ends). */
export const CONCURRENCY_RETRY_MS = 1000;
/** An estimated cost is held from admission until settled or released, at most this long (a crashed process's lapse). */
export const HOLD_MINUTES = 15;
/** A USD limit taken up only by what requests in flight hold: come back after this long (they settle, mostly for less). */
export const HELD_RETRY_MS = 1000;
/** A settlement's marker lives this long (at most the retention); later repeats are caught by the record kept. */
export const SETTLE_MARKER_MS = 600_000;
/** The embedded store also caps one key's markers at this many (the oldest go first). */
export const SETTLE_MARKERS_PER_KEY = 100_000;

export const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS);
/** The current rate (GET /v1/usage rpm, tpm) counts what was settled in this many whole seconds, the current one included. */
export const RATE_SECONDS = 60;
export const secondOf = (ms: number): number => Math.floor(ms / 1000);
/** The embedded store keeps per-second counts this many seconds (more than RATE_SECONDS: they are pruned lazily). */
export const RATE_KEPT_SECONDS = 180;
export const msToNextMinute = (ms: number): number => MINUTE_MS - (ms % MINUTE_MS);

let lastDay = NaN;
let lastDate = '';
/** YYYY-MM-DD of the UTC day holding this instant (the last day's text is kept: every settlement asks for it). */
export function utcDate(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDate = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastDay = day;
  }
  return lastDate;
}
/** Start of a UTC day given as YYYY-MM-DD (NaN when malformed). */
export const dateStart = (date: string): number =>
  /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : NaN;

/** Every UTC date from `from` to `to` inclusive, oldest first, never more than `max` (the newest ones). */
export function dateRange(from: string, to: string, max = ROLLUP_DAYS + 1): string[] {
  const a = dateStart(from);
  const b = dateStart(to);
  if (!Number.isFinite(a) || !Number.isFinite(b) || a > b) return [];
  const out: string[] = [];
  for (let d = Math.max(a, b - (max - 1) * DAY_MS); d <= b; d += DAY_MS) out.push(utcDate(d));
  return out;
}
