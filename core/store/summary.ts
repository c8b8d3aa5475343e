// The gateway-wide rollups behind the operator's overview, the same fields in both stores: per minute, hour and UTC day,
// usage by key, group and model (requests, errors, tokens, cost) and failed upstream attempts by group, account and reason.
import type { RollupUnit, UsageBucket, UsageRecord } from './types.ts';
import { recordCost, recordTokens, rollupModel } from './rollup.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS, fromNano } from './units.ts';

export const UNIT_MS: Record<RollupUnit, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };
/** How long a bucket of each unit is kept: the longest overview window drawn in that unit (1 h, 7 d, 30 d) and a margin. */
export const UNIT_KEEP_MS: Record<RollupUnit, number> = { minute: 2 * HOUR_MS, hour: 8 * DAY_MS, day: 32 * DAY_MS };
export const ROLLUP_UNITS: RollupUnit[] = ['minute', 'hour', 'day'];
/** Buckets one read returns at most (the newest). */
export const MAX_BUCKETS = 1000;

// A client that left is not an error of the gateway or the upstream; an answer cut by its output cap is not either.
const ERROR_ENDINGS = new Set(['failed', 'missing-terminal', 'timeout']);
export const isError = (r: Pick<UsageRecord, 'status' | 'ending'>): boolean => r.status >= 400 || ERROR_ENDINGS.has(r.ending);

// Attempts that say nothing against the account: it answered, or the request itself was refused.
const NOT_FAILURES = new Set(['ok', 'client_error']);

interface UsageNames { key: string; group: string; model: string; r: string; e: string; t: string; c: string }
let lastNames: UsageNames | undefined;
/** The usage fields' names of the record's [key, group, model] (the last ones kept: consecutive records share them). */
function usageNames(r: UsageRecord): UsageNames {
  const d = lastNames;
  const model = rollupModel(r);
  if (d && d.key === r.key_id && d.group === r.group && d.model === model) return d;
  const dims = JSON.stringify([r.key_id, r.group, model]);
  return (lastNames = { key: r.key_id, group: r.group, model, r: `r${dims}`, e: `e${dims}`, t: `t${dims}`, c: `c${dims}` });
}

/**
 * A field is a letter and the JSON array of its dimensions (any character is safe): r e t c = requests, errors, tokens,
 * cost by [key, group, model]; f v = failures, failovers by [group, account, reason].
 */
export function summaryFields(r: UsageRecord): [string, number][] {
  const names = usageNames(r);
  const out: [string, number][] = [[names.r, 1]];
  if (isError(r)) out.push([names.e, 1]);
  const tokens = recordTokens(r);
  if (tokens > 0) out.push([names.t, tokens]);
  const cost = recordCost(r);
  if (cost > 0) out.push([names.c, cost]);
  out.push(...attemptFields(r));
  return out;
}

/** The f and v fields of summaryFields: the record's failed attempts, and those that moved it to another account. */
function attemptFields(r: UsageRecord): [string, number][] {
  const out: [string, number][] = [];
  const attempts = r.attempts ?? [];
  attempts.forEach((a, i) => {
    if (NOT_FAILURES.has(a.reason)) return;
    const at = JSON.stringify([a.group ?? r.group, a.account, a.reason]);
    out.push([`f${at}`, 1]);
    // A failed attempt followed by another one moved the request to another account.
    if (i < attempts.length - 1) out.push([`v${at}`, 1]);
  });
  return out;
}

/** Bucket starts of `unit` from the one holding `from` to the one holding `to`, oldest first, at most MAX_BUCKETS. */
export function bucketStarts(unit: RollupUnit, from: number, to: number): number[] {
  const ms = UNIT_MS[unit];
  const last = Math.floor(to / ms) * ms;
  const first = Math.max(Math.floor(from / ms) * ms, last - (MAX_BUCKETS - 1) * ms);
  const out: number[] = [];
  for (let s = first; s <= last; s += ms) out.push(s);
  return out;
}

const USAGE = { r: 'requests', e: 'errors', t: 'tokens', c: 'cost' } as const;
const ATTEMPTS = { f: 'failures', v: 'failovers' } as const;

type UsageRow = UsageBucket['usage'][number];
type AttemptRow = UsageBucket['attempts'][number];

function dimensions(field: string): string[] | undefined {
  try {
    const d: unknown = JSON.parse(field.slice(1));
    return Array.isArray(d) && d.length === 3 && d.every((x) => typeof x === 'string') ? d : undefined;
  } catch { return undefined; }
}

/** One bucket from its stored fields (a Redis hash reply or the memory store's map); unknown fields are skipped. */
export function parseBucket(start: number, fields: Iterable<[string, number | string]>): UsageBucket {
  const usage = new Map<string, UsageRow>();
  const attempts = new Map<string, AttemptRow>();
  for (const [field, raw] of fields) {
    const letter = field[0];
    const d = dimensions(field);
    const n = Number(raw) || 0;
    if (!d) continue;
    const id = field.slice(1);
    if (letter in USAGE) {
      let row = usage.get(id);
      if (!row) usage.set(id, (row = { key: d[0], group: d[1], model: d[2], requests: 0, errors: 0, tokens: 0, cost: 0 }));
      row[USAGE[letter as keyof typeof USAGE]] = letter === 'c' ? fromNano(n) : n;
    } else if (letter in ATTEMPTS) {
      let row = attempts.get(id);
      if (!row) attempts.set(id, (row = { group: d[0], account: d[1], reason: d[2], failures: 0, failovers: 0 }));
      row[ATTEMPTS[letter as keyof typeof ATTEMPTS]] = n;
    }
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    start,
    usage: [...usage.entries()].sort(([a], [b]) => order(a, b)).map(([, row]) => row),
    attempts: [...attempts.entries()].sort(([a], [b]) => order(a, b)).map(([, row]) => row),
  };
}

/** A field's count, updated in place (a Map value past 2^31 was a new heap number at every addition). */
interface Count { n: number }
type Bucket = Map<string, Count>;

function bump(bucket: Bucket, field: string, n: number): void {
  const c = bucket.get(field);
  if (c) c.n += n;
  else bucket.set(field, { n });
}

/** The memory store's rollups: one map of fields per bucket, per unit; a bucket older than its unit's keep is dropped. */
export class MemorySummary {
  private readonly units = new Map<RollupUnit, Map<number, Bucket>>(ROLLUP_UNITS.map((u) => [u, new Map()]));

  add(r: UsageRecord): void {
    const fields = summaryFields(r);
    const clock = Math.floor(r.time);
    for (const unit of ROLLUP_UNITS) {
      const buckets = this.units.get(unit)!;
      const start = Math.floor(clock / UNIT_MS[unit]) * UNIT_MS[unit];
      let bucket = buckets.get(start);
      if (!bucket) {
        buckets.set(start, (bucket = new Map()));
        for (const s of buckets.keys()) if (s < clock - UNIT_KEEP_MS[unit]) buckets.delete(s);
      }
      for (const [f, n] of fields) bump(bucket, f, n);
    }
  }

  read(unit: RollupUnit, from: number, to: number): UsageBucket[] {
    const buckets = this.units.get(unit)!;
    return bucketStarts(unit, from, to).map((s) => parseBucket(s, [...(buckets.get(s) ?? [])].map(([f, c]): [string, number] => [f, c.n])));
  }
}
