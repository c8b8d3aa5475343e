// Reads from Redis: a key's usage (one pipeline on the key's slot) and record listings (index pages + HMGET).
import type { KeyUsage, RecordFilter, UsageRecord } from './types.ts';
import type { RedisClient } from './lua/index.ts';
import { pageRecords, type IndexEntry, type RecordIndex } from './paging.ts';
import type { KeyLayout } from './redis-keys.ts';
import { COUNTER_FIELDS, countersFromHash, emptyCounters, type Counters } from './rollup.ts';
import { WINDOWS, usageDates, type WindowName } from './units.ts';
import { buildKeyUsage } from './usage-view.ts';

type Hash = Record<string, string>;
const FIELDS = new Set<string>(COUNTER_FIELDS);

/** Per-model counters from a day's "<counter>:<model>" hash. */
function modelCounters(h: Hash): Map<string, Counters> {
  const out = new Map<string, Counters>();
  for (const [field, v] of Object.entries(h)) {
    const i = field.indexOf(':');
    const name = field.slice(0, i);
    if (i < 0 || !FIELDS.has(name)) continue;
    const model = field.slice(i + 1);
    let c = out.get(model);
    if (!c) out.set(model, (c = emptyCounters()));
    c[name as keyof Counters] = Number(v) || 0;
  }
  return out;
}

export async function readKeyUsage(
  client: RedisClient, layout: KeyLayout, keyId: string, opts: { days: number; from?: string; to?: string; now: number },
): Promise<KeyUsage> {
  const k = layout.key(keyId);
  const dates = usageDates(opts);
  // Every key read here carries the key's hash tag, so this pipeline is one round trip even on Cluster.
  const p = client.pipeline();
  p.hgetall(k.total);
  p.hgetall(k.acct);
  for (const d of dates.days) p.hgetall(k.day(d));
  for (const d of dates.models) p.hgetall(k.dayModels(d));
  const replies = (await p.exec()) ?? [];
  const hashes = replies.map(([err, v]) => {
    if (err) throw err;
    return (v ?? {}) as Hash;
  });
  const [total, acct] = hashes;
  const dayHashes = hashes.slice(2, 2 + dates.days.length);
  const modelHashes = hashes.slice(2 + dates.days.length);
  const windows: Partial<Record<WindowName, { start: number; used: number }>> = {};
  for (const w of WINDOWS) {
    const start = acct[`s${w.window}`];
    if (start !== undefined) windows[w.window] = { start: Number(start), used: Number(acct[`u${w.window}`] ?? 0) };
  }
  return buildKeyUsage({
    total: countersFromHash(total),
    days: dates.days.map((d, i) => [d, Object.keys(dayHashes[i]).length ? countersFromHash(dayHashes[i]) : undefined]),
    modelDays: modelHashes.map(modelCounters),
    windows,
  }, opts.now);
}

/** A record index stored as a sorted set (time -> request id) plus a hash (request id -> JSON). */
class RedisRecordIndex implements RecordIndex {
  private readonly client: RedisClient;
  private readonly index: string;
  private readonly records: string;
  constructor(client: RedisClient, index: string, records: string) {
    this.client = client;
    this.index = index;
    this.records = records;
  }

  async page(max: number, min: number, offset: number, count: number): Promise<IndexEntry[]> {
    const hi = max === Infinity ? '+inf' : String(max);
    const lo = min === -Infinity ? '-inf' : String(min);
    const flat = await this.client.zrevrangebyscore(this.index, hi, lo, 'WITHSCORES', 'LIMIT', offset, count);
    const out: IndexEntry[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ id: flat[i], score: Number(flat[i + 1]) });
    return out;
  }

  async load(ids: string[]): Promise<(UsageRecord | undefined)[]> {
    if (ids.length === 0) return [];
    const json = await this.client.hmget(this.records, ...ids);
    return json.map((j) => (j ? (JSON.parse(j) as UsageRecord) : undefined));
  }
}

export function readRecords(client: RedisClient, layout: KeyLayout, filter: RecordFilter): Promise<{ records: UsageRecord[]; cursor?: string }> {
  if (filter.key !== undefined) {
    const k = layout.key(filter.key);
    return pageRecords(new RedisRecordIndex(client, k.index, k.records), filter);
  }
  return pageRecords(new RedisRecordIndex(client, layout.global.index, layout.global.records), filter);
}
