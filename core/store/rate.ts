// The current rate (GET /v1/usage rpm and tpm): requests and tokens settled per second, over the last RATE_SECONDS.
import { RATE_SECONDS, secondOf } from './units.ts';

export interface Rate { requests: number; tokens: number }

/** True when this epoch second counts toward the rate at `now` (the current second included). */
export function inWindow(second: number, now: number): boolean {
  const current = secondOf(now);
  return second > current - RATE_SECONDS && second <= current;
}

/** The rate from Redis rate hashes (fields "<epoch second>:r" and ":t"). */
export function rateFromHashes(hashes: Record<string, string>[], now: number): Rate {
  const rate: Rate = { requests: 0, tokens: 0 };
  for (const hash of hashes) {
    for (const [field, value] of Object.entries(hash)) {
      const [second, what] = field.split(':');
      if (!inWindow(Number(second), now)) continue;
      if (what === 'r') rate.requests += Number(value) || 0;
      else if (what === 't') rate.tokens += Number(value) || 0;
    }
  }
  return rate;
}

/** The rate from the memory store's per-second counts. */
export function rateFromSeconds(seconds: Map<number, Rate> | undefined, now: number): Rate {
  const rate: Rate = { requests: 0, tokens: 0 };
  for (const [second, r] of seconds ?? []) {
    if (!inWindow(second, now)) continue;
    rate.requests += r.requests;
    rate.tokens += r.tokens;
  }
  return rate;
}
