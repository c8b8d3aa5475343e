// One key's limit checks (rpm, tpm, concurrency, USD quota and windows) as plain functions over plain numbers, no I/O: the
// embedded store calls them (memory/ledger.ts); lua/admit.lua is their Redis form (redis-limits-parity.test.ts).
import type { AdmitRefusal, AdmitResult, KeyLimits } from '../types.ts';
import { CONCURRENCY_RETRY_MS, HELD_RETRY_MS, RPM_WINDOW_MS, WINDOWS, msToNextMinute, toNano, type WindowName } from '../units.ts';
import { windowRuns, type SpendWindows } from './ledger.ts';

export type Refusal = Extract<AdmitResult, { ok: false }>;

export const refuse = (reason: AdmitRefusal, retryAfterMs?: number, window?: WindowName, held?: boolean): Refusal =>
  ({ ok: false, reason, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...(window ? { window } : {}), ...(held ? { held } : {}) });

/** A count limit as a whole number; 0 (none) for a missing, non-positive or non-finite one. */
export const positive = (n: number | undefined): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

/** Whether the key has a USD limit: only then is what requests in flight hold read. */
export const hasUsdLimit = (l: KeyLimits): boolean =>
  toNano(l.quota_usd) > 0 || toNano(l.usd_5h) > 0 || toNano(l.usd_1d) > 0 || toNano(l.usd_7d) > 0;

/** Quota, then the windows, with what requests in flight hold (`held`) counted as spent; undefined when all have room. */
export function usdRefusal(l: KeyLimits, spend: number, windows: SpendWindows, held: number, now: number): Refusal | undefined {
  const quota = toNano(l.quota_usd);
  if (quota > 0 && spend >= quota) return refuse('quota_exhausted');
  if (quota > 0 && spend + held >= quota) return refuse('quota_exhausted', HELD_RETRY_MS, undefined, true);
  let wait = -1;
  let win: WindowName | undefined;
  let byHeld = false;
  for (const w of WINDOWS) {
    const limit = toNano(l[`usd_${w.window}`]);
    if (limit <= 0) continue;
    const s = windows[w.window];
    const used = windowRuns(s, w.ms, now) ? s.used : 0;
    // With several windows exhausted, only the one that resets last tells when waiting helps.
    const until = used >= limit ? s!.start + w.ms - now : used + held >= limit ? HELD_RETRY_MS : -1;
    if (until > wait) {
      wait = until;
      win = w.window;
      byHeld = used < limit;
    }
  }
  return win ? refuse('window_exhausted', wait, win, byHeld) : undefined;
}

/** A full concurrency pool: come back when the earliest lease ends, at most CONCURRENCY_RETRY_MS (heartbeats renew them). */
export const concurrencyRefusal = (earliest: number, now: number): Refusal =>
  refuse('concurrency', Math.max(1, Math.min(earliest - now, CONCURRENCY_RETRY_MS)));

/** Whether an admission made at `at` has left the sliding rpm window at `now`. */
export const rpmGone = (at: number, now: number): boolean => at <= now - RPM_WINDOW_MS;

/** A full rpm window: come back when its oldest admission leaves it. */
export const rpmRefusal = (oldest: number, now: number): Refusal => refuse('rpm', Math.max(1, oldest + RPM_WINDOW_MS - now));

/** The minute's tpm bucket with `used` tokens: an estimate above the whole budget never fits (waiting cannot help). */
export function tpmRefusal(used: number, estimated: number, tpm: number, now: number): Refusal | undefined {
  if (estimated > tpm) return refuse('tpm');
  return used + estimated > tpm ? refuse('tpm', msToNextMinute(now)) : undefined;
}
