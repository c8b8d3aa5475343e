// Reads from Redis: a key's usage (one pipeline and the rate script, on the key's slot) and record listings (log.ts).
import type { KeyUsage, RecordFilter, RollupUnit, UsageBucket, UsageRecord } from '../types.ts';
import type { RedisClient } from '../lua/index.ts';
import { pageRecords } from '../paging.ts';
import { MergedLogIndex, RedisLogIndex } from './log.ts';
import type { KeyLayout } from './keys.ts';
import { COUNTER_FIELDS, countersFromHash, emptyCounters, type Counters } from '../rollup.ts';
import { rateFromHashes } from '../rate.ts';
import { bucketStarts, parseBucket } from '../summary.ts';
import { minuteOf, WINDOWS, type WindowName } from '../units.ts';
import { usagePlan, type UsageQuery } from '../usage-plan.ts';
import { buildKeyUsage } from '../usage-view.ts';

type Hash = Record<string, string>;
const FIELDS = new Set<string>(COUNTER_FIELDS);

/** Per-model counters from a "<counter>:<model>" hash. */
function modelCounters(h: Hash): Map<string, Counters> {
  const out = new Map<string, Counters>();
  for (const [field, v] of Object.entries(h)) addModelField(out, field, v);
  return out;
}

function addModelField(out: Map<string, Counters>, field: string, v: string): void {
  const i = field.indexOf(':');
  const name = field.slice(0, i);
  if (i < 0 || !FIELDS.has(name)) return;
  const model = field.slice(i + 1);
  let c = out.get(model);
  if (!c) out.set(model, (c = emptyCounters()));
  c[name as keyof Counters] = Number(v) || 0;
}

/** Splits an hourly hash ("<HH>:<rest>") by UTC hour. */
function byHour<T>(h: Hash, make: () => T, set: (into: T, field: string, v: string) => void): Map<number, T> {
  const out = new Map<number, T>();
  for (const [field, v] of Object.entries(h)) {
    const hour = Number(field.slice(0, 2));
    if (field[2] !== ':' || !Number.isInteger(hour)) continue;
    let t = out.get(hour);
    if (!t) out.set(hour, (t = make()));
    set(t, field.slice(3), v);
  }
  return out;
}

const hourCounters = (h: Hash) => byHour(h, emptyCounters, (c, name, v) => {
  if (FIELDS.has(name)) c[name as keyof Counters] = Number(v) || 0;
});
const hourModelCounters = (h: Hash) => byHour(h, () => new Map<string, Counters>(), addModelField);

export async function readKeyUsage(client: RedisClient, layout: KeyLayout, keyId: string, opts: UsageQuery): Promise<KeyUsage> {
  const k = layout.key(keyId);
  const plan = usagePlan(opts);
  // Every key read here carries the key's hash tag, so this pipeline (and the rate script beside it) is one round
  // trip even on Cluster.
  const p = client.pipeline();
  p.hgetall(k.total);
  p.hgetall(k.acct);
  for (const d of plan.days) {
    p.hgetall(k.day(d.date));
    if (d.hours) p.hgetall(k.hours(d.date));
  }
  for (const d of plan.modelDays) {
    p.hgetall(k.dayModels(d.date));
    if (d.hours) p.hgetall(k.hourModels(d.date));
  }
  const minute = minuteOf(opts.now);
  p.hgetall(k.rate(minute - 1));
  p.hgetall(k.rate(minute));
  const replies = await p.exec();
  const hashes = (replies ?? []).map(([err, v]) => {
    if (err) throw err;
    return (v ?? {}) as Hash;
  });
  let next = 0;
  const take = () => hashes[next++];
  const [total, acct] = [take(), take()];
  const days = plan.days.map((d) => {
    const day = take();
    const hours = d.hours ? hourCounters(take()) : undefined;
    return { total: Object.keys(day).length ? countersFromHash(day) : undefined, hours };
  });
  const modelDays = plan.modelDays.map((d) => ({ models: modelCounters(take()), hours: d.hours ? hourModelCounters(take()) : undefined }));
  const windows: Partial<Record<WindowName, { start: number; used: number }>> = {};
  for (const w of WINDOWS) {
    const start = acct[`s${w.window}`];
    if (start !== undefined) windows[w.window] = { start: Number(start), used: Number(acct[`u${w.window}`] ?? 0) };
  }
  return buildKeyUsage(plan, {
    total: countersFromHash(total),
    days,
    modelDays,
    windows,
    duration: { ms: Number(total.duration_ms ?? 0) || 0, requests: Number(total.timed ?? 0) || 0 },
    lastMinute: rateFromHashes([take(), take()], opts.now),
  }, opts.now);
}

/**
 * A page of a key's records, or of every key's (the global stripes merged, the newest `recordsTotal`); those older than
 * `retentionMs` before the list's newest are gone.
 */
export function readRecords(client: RedisClient, layout: KeyLayout, filter: RecordFilter, o: { retentionMs: number; recordsTotal: number }): Promise<{ records: UsageRecord[]; cursor?: string }> {
  const index = filter.key !== undefined ? new RedisLogIndex(client, layout.key(filter.key), o.retentionMs)
    : new MergedLogIndex(client, layout.stripes, o.retentionMs, o.recordsTotal);
  return pageRecords(index, filter);
}

/** The gateway-wide rollup buckets, summed over the stripes: a pipeline of HGETALLs per stripe (one slot each). */
export async function readUsageBuckets(client: RedisClient, layout: KeyLayout, unit: RollupUnit, from: number, to: number): Promise<UsageBucket[]> {
  const starts = bucketStarts(unit, from, to);
  const stripes = await Promise.all(layout.stripes.map(async (g) => {
    const p = client.pipeline();
    for (const s of starts) p.hgetall(g.summary(unit, s));
    return (await p.exec()) ?? [];
  }));
  return starts.map((s, i) => {
    const sums = new Map<string, number>();
    for (const replies of stripes) {
      const [err, v] = replies[i] ?? [null, {}];
      if (err) throw err;
      for (const [f, n] of Object.entries((v ?? {}) as Hash)) sums.set(f, (sums.get(f) ?? 0) + (Number(n) || 0));
    }
    return parseBucket(s, sums);
  });
}
