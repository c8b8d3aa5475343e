// Cost of a request from the pricing table (USD per 1M tokens, model names may be globs) and the group's multiplier:
// what metering bills, and what rate-limit holds against the USD limits before the answer.
import type { Usage } from '../core/usage.ts';
import { matchesAny } from './globs.ts';

export type Price = { input?: number; output?: number; cache_read?: number; cache_write?: number; cache_write_1h?: number };

/** Exact name first, then the first glob that matches (in table order). */
export function findPrice(pricing: Record<string, Price>, model: string): Price | undefined {
  if (Object.hasOwn(pricing, model)) return pricing[model];
  for (const [name, price] of Object.entries(pricing)) if (matchesAny([name], model)) return price;
  return undefined;
}

/** Tokens split as billed: uncached input, cache reads, cache writes (of them, the 1-hour ones), output (reasoning included). */
export function billable(u: Usage) {
  return {
    input: Math.max(0, u.input - u.cacheRead - u.cacheWrite),
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    cacheWrite1h: Math.min(u.cacheWrite, u.cacheWrite1h ?? 0),
    output: u.output,
  };
}

/**
 * USD; cache reads and writes fall back to the input price when the table gives none for them, 1-hour cache writes to
 * the cache-write price.
 */
export function cost(u: Usage, price: Price, multiplier: number): number {
  const b = billable(u);
  const input = price.input ?? 0;
  const write = price.cache_write ?? input;
  const usd = b.input * input + b.cacheRead * (price.cache_read ?? input)
    + (b.cacheWrite - b.cacheWrite1h) * write + b.cacheWrite1h * (price.cache_write_1h ?? write) + b.output * (price.output ?? 0);
  return (usd / 1_000_000) * multiplier;
}
