// One key's limit rules (rpm, tpm, concurrency, USD quota and windows) as plain functions over plain numbers, no I/O: the
// embedded store calls them (memory/ledger.ts); lua/admit*.lua and settle*.lua are their Redis form (contract tests).
import type { AdmitRefusal, AdmitResult, KeyLimits } from '../types.ts';
import {
  CONCURRENCY_RETRY_MS, HELD_RETRY_MS, HOLD_MINUTES, RPM_WINDOW_MS, WINDOWS, msToNextMinute, toNano, type WindowName,
} from '../units.ts';

export type Refusal = Extract<AdmitResult, { ok: false }>;

/** A key's spend windows: when each started (at its first spend after the last one ended) and what it holds (nano). */
export type SpendWindows = Partial<Record<WindowName, { start: number; used: number }>>;

export const refuse = (reason: AdmitRefusal, retryAfterMs?: number, window?: WindowName, held?: boolean): Refusal =>
  ({ ok: false, reason, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...(window ? { window } : {}), ...(held ? { held } : {}) });

/** A count limit as a whole number; 0 (none) for a missing, non-positive or non-number one. */
export const positive = (n: number | undefined): number => (typeof n === 'number' && n > 0 ? Math.floor(n) : 0);

/** Whether the key has a USD limit: only then is what requests in flight hold read. */
export const hasUsdLimit = (l: KeyLimits): boolean =>
  toNano(l.quota_usd) > 0 || toNano(l.usd_5h) > 0 || toNano(l.usd_1d) > 0 || toNano(l.usd_7d) > 0;

/** Whether a hold taken in minute `m` still counts at `minute` (older ones lapse: the holds of a crashed process). */
export const holdCounts = (m: number, minute: number): boolean => m > minute - HOLD_MINUTES;

/**
 * Quota, then the 5h/1d/7d windows, with what requests in flight hold (`held`, nano) counted as spent: concurrent
 * requests cannot all pass a limit they reach together. Undefined when every USD limit has room.
 */
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
    const used = s && now < s.start + w.ms ? s.used : 0;
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

/** Tokens a settlement adds to its admission minute's bucket: the actual ones less the estimate (gone already after a release). */
export const tpmCorrection = (actual: number, estimated: number, released: boolean): number => actual - (released ? 0 : estimated);

/** A settled cost counts in each window; a window that ended (or never started) starts again at this settlement. */
export function spendInWindows(windows: SpendWindows, clock: number, cost: number): void {
  for (const w of WINDOWS) {
    const s = windows[w.window];
    if (!s || clock >= s.start + w.ms) windows[w.window] = { start: clock, used: cost };
    else s.used += cost;
  }
}
