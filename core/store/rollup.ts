// Rollup arithmetic both stores share: what one record adds to the totals, and turning counters back into UsageTotals.
import type { UsageRecord, UsageTotals } from './types.ts';
import { fromNano, toNano } from './units.ts';

/** Counter names as stored (Redis hash fields, memory objects); `cost` is in nano-dollars. */
export const COUNTER_FIELDS = [
  'requests', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost',
] as const;
export type Counters = Record<(typeof COUNTER_FIELDS)[number], number>;

const count = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

export const emptyCounters = (): Counters =>
  ({ requests: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, cost: 0 });

/** What one record adds: one request, its token counts, its cost (negative costs are clamped to 0). */
export function recordCounters(r: UsageRecord): Counters {
  return {
    requests: 1,
    input_tokens: count(r.input_tokens),
    output_tokens: count(r.output_tokens),
    cache_read_tokens: count(r.cache_read_tokens),
    cache_write_tokens: count(r.cache_write_tokens),
    reasoning_tokens: count(r.reasoning_tokens),
    cost: recordCost(r),
  };
}

/** A record's cost in nano-dollars (a negative one counts 0). */
export const recordCost = (r: UsageRecord): number => Math.max(0, toNano(r.cost));

/** Tokens a record counts against tpm: all the upstream processed (reasoning is part of output_tokens). */
export const recordTokens = (r: UsageRecord): number =>
  count(r.input_tokens) + count(r.output_tokens) + count(r.cache_read_tokens) + count(r.cache_write_tokens);

/** The duration a record adds to the key's summed durations (average_duration_ms). */
export const recordDuration = (r: UsageRecord): number => count(r.duration_ms);

export function addCounters(into: Counters, add: Counters): Counters {
  for (const f of COUNTER_FIELDS) into[f] += add[f];
  return into;
}

export function toTotals(c: Counters): UsageTotals {
  return {
    requests: c.requests,
    input_tokens: c.input_tokens,
    output_tokens: c.output_tokens,
    cache_read_tokens: c.cache_read_tokens,
    cache_write_tokens: c.cache_write_tokens,
    reasoning_tokens: c.reasoning_tokens,
    cost: fromNano(c.cost),
  };
}

/** Counters from a Redis hash reply (missing fields are 0). */
export function countersFromHash(h: Record<string, string> | null | undefined): Counters {
  const c = emptyCounters();
  if (h) for (const f of COUNTER_FIELDS) c[f] = Number(h[f] ?? 0) || 0;
  return c;
}

/** The per-model row of whatever has none of its own (see rollupModel and topModels). */
export const OTHER_MODEL = 'other';
/** Per-model rows at most (unknown names per key and day, and in a usage answer); the rest count under OTHER_MODEL. */
export const MODEL_ROWS = 100;

/** The model a record's per-model rollups (a key's days and hours, the gateway-wide buckets) count it under. */
export const rollupModel = (r: UsageRecord): string => (r.rollup_model === OTHER_MODEL ? OTHER_MODEL : r.model);

/** Per-model stats, busiest first (then by name, so both stores answer in the same order). */
export function sortModels<T extends { model: string; requests: number }>(rows: T[]): T[] {
  return rows.sort((a, b) => b.requests - a.requests || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/** The MODEL_ROWS busiest models, then one OTHER_MODEL row for the rest (and what was counted under it) when any. */
export function topModels(models: Map<string, Counters>): { model: string; counters: Counters }[] {
  const rows = sortModels([...models].filter(([model]) => model !== OTHER_MODEL).map(([model, c]) => ({ model, requests: c.requests, counters: c })));
  const other = models.get(OTHER_MODEL);
  if (rows.length <= MODEL_ROWS && !other) return rows;
  const rest = other ? { ...other } : emptyCounters();
  for (const row of rows.slice(MODEL_ROWS)) addCounters(rest, row.counters);
  return [...rows.slice(0, MODEL_ROWS), { model: OTHER_MODEL, requests: rest.requests, counters: rest }];
}
