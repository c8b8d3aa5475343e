// The Redis store's write-behind for what no limit reads: settled records and their rollups (per key and gateway-wide)
// wait here at most BATCH_MS and go in one script per key and minute (settle-batch.lua) and one per minute for the
// global index (global-record.lua), instead of two scripts and ~40 commands per request. Both scripts skip records
// they hold already, so a batch sent again after a failure counts nothing twice. A process that crashes loses at most
// its unsent batch (records and rollups; never a limit: settle.lua counted spend, tokens and the lease at once).
import type { UsageRecord } from './types.ts';
import { scripts, type RedisClient } from './lua/index.ts';
import type { KeyLayout } from './redis-keys.ts';
import { COUNTER_FIELDS, recordCounters, recordDuration, recordTokens } from './rollup.ts';
import { ROLLUP_UNITS, UNIT_KEEP_MS, UNIT_MS, summaryFields } from './summary.ts';
import { DAY_MS, HOUR_ROLLUP_DAYS, ROLLUP_DAYS, minuteOf, secondOf, utcDate, utcHour } from './units.ts';

/** How long a settled record may wait before it is written. */
export const BATCH_MS = 100;
/** A batch this large is written at once. */
const BATCH_RECORDS = 1000;
/** Records kept for a Redis that does not answer; beyond this the oldest are dropped (and reported). */
const MAX_WAITING = 100_000;
/** After a failed write, the next try. */
const RETRY_MS = 1000;

interface Group {
  script: 'settleBatch' | 'globalRecord';
  minute: number;
  keys: string[];
  head: (string | number)[];
  /** The script's arguments of each record, in order (a minute's global group holds its key groups' records again). */
  args: Row[];
}

export interface BatchOptions { retentionMs: number; recordsPerKey: number; recordsTotal: number }

type Row = (string | number)[];

/** A record's arguments to settle-batch.lua. */
export function keyRow(record: UsageRecord, json: string): Row {
  const time = Math.floor(record.time);
  const c = recordCounters(record);
  return [
    record.request_id, time, json, record.model, utcHour(time), recordDuration(record), secondOf(time), recordTokens(record),
    ...COUNTER_FIELDS.map((f) => c[f]),
  ];
}

/** A record's arguments to global-record.lua. */
export function globalRow(record: UsageRecord, json: string): Row {
  const fields = summaryFields(record);
  return [record.request_id, Math.floor(record.time), json, fields.length, ...fields.flat()];
}

/**
 * What settle-batch.lua adds to each of its six rollup hashes (totals, day, day per model, hour, hour per model, rate)
 * for `rows` (its per-record arguments), all new: [field, increment] pairs, the same fields and sums the script makes.
 */
export function keySums(rows: Row[]): [string, number][][] {
  const per = new Map<string, { model: string; hour: string; c: number[] }>();
  const seconds = new Map<string, [number, number]>();
  let duration = 0;
  for (const r of rows) {
    const model = String(r[3]);
    const hour = String(r[4]);
    let p = per.get(`${hour}:${model}`);
    if (!p) per.set(`${hour}:${model}`, (p = { model, hour, c: COUNTER_FIELDS.map(() => 0) }));
    for (let j = 0; j < COUNTER_FIELDS.length; j++) p.c[j] += Number(r[8 + j]);
    duration += Number(r[5]);
    const sec = seconds.get(String(r[6])) ?? [0, 0];
    sec[0]++;
    sec[1] += Number(r[7]);
    seconds.set(String(r[6]), sec);
  }
  const sums = Array.from({ length: 6 }, () => new Map<string, number>());
  const add = (k: number, field: string, v: number) => sums[k].set(field, (sums[k].get(field) ?? 0) + v);
  for (const { model, hour, c } of per.values()) {
    c.forEach((v, j) => {
      if (v === 0) return;
      const f = COUNTER_FIELDS[j];
      add(0, f, v);
      add(1, f, v);
      add(2, `${f}:${model}`, v);
      add(3, `${hour}:${f}`, v);
      add(4, `${hour}:${f}:${model}`, v);
    });
  }
  add(0, 'duration_ms', duration);
  add(0, 'timed', rows.length);
  for (const [second, [n, tokens]] of seconds) {
    add(5, `${second}:r`, n);
    if (tokens !== 0) add(5, `${second}:t`, tokens);
  }
  return sums.map((m) => [...m]);
}

/** What global-record.lua adds to each rollup hash for `rows`, all new: [field, increment] pairs. */
export function globalSums(rows: Row[]): [string, number][] {
  const sums = new Map<string, number>();
  for (const r of rows) {
    for (let j = 4; j < 4 + 2 * Number(r[3]); j += 2) sums.set(String(r[j]), (sums.get(String(r[j])) ?? 0) + Number(r[j + 1]));
  }
  return [...sums];
}

/**
 * The arguments of a batch script's sums form (settle-batch-sums.lua, global-record-sums.lua): three per record and
 * the rollups summed here, instead of every record's fields; undefined when the rows name a record twice (that batch
 * goes as the per-record script, which counts it once).
 */
export function sumsArgs(script: 'settleBatch' | 'globalRecord', head: Row, rows: Row[]): Row | undefined {
  if (new Set(rows.map((r) => r[0])).size !== rows.length) return undefined;
  const records = rows.flatMap((r) => [r[0], r[1], r[2]]);
  // Each rollup hash's pairs, after their count.
  const counted = (pairs: [string, number][]): Row => [pairs.length, ...pairs.flat()];
  const tail = script === 'settleBatch' ? keySums(rows).flatMap(counted) : counted(globalSums(rows));
  return [...head, rows.length, ...records, ...tail];
}

export class SettleBatch {
  private groups = new Map<string, Group>();
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  private readonly client: RedisClient;
  private readonly layout: KeyLayout;
  private readonly opts: BatchOptions;
  private readonly onError: (err: Error, waiting: number) => void;

  /** `onError`: a write that failed (it is retried) or records dropped because too many waited. */
  constructor(client: RedisClient, layout: KeyLayout, opts: BatchOptions, onError: (err: Error, waiting: number) => void) {
    this.client = client;
    this.layout = layout;
    this.opts = opts;
    this.onError = onError;
  }

  /** Records waiting to be written. */
  get size(): number { return this.waiting; }

  add(record: UsageRecord, json: string): void {
    const time = Math.floor(record.time);
    const minute = minuteOf(time);
    this.group(`k:${record.key_id}:${minute}`, 'settleBatch', minute, () => {
      const k = this.layout.key(record.key_id);
      const date = utcDate(time);
      return {
        keys: [k.total, k.day(date), k.dayModels(date), k.hours(date), k.hourModels(date), k.rate(minute), k.records, k.index],
        head: [this.opts.retentionMs, ROLLUP_DAYS * DAY_MS, HOUR_ROLLUP_DAYS * DAY_MS, this.opts.recordsPerKey],
      };
    }).args.push(keyRow(record, json));
    this.group(`g:${minute}`, 'globalRecord', minute, () => {
      const g = this.layout.global;
      return {
        keys: [g.index, g.records, ...ROLLUP_UNITS.map((u) => g.summary(u, Math.floor(time / UNIT_MS[u]) * UNIT_MS[u]))],
        head: [this.opts.retentionMs, this.opts.recordsTotal, ...ROLLUP_UNITS.map((u) => UNIT_KEEP_MS[u])],
      };
    }).args.push(globalRow(record, json));
    this.waiting++;
    if (this.waiting > MAX_WAITING) this.dropOldest();
    if (this.waiting >= BATCH_RECORDS) void this.flush().catch(() => {});
    else this.timer ??= setTimeout(() => { this.timer = undefined; void this.flush().catch(() => {}); }, BATCH_MS).unref();
  }

  private group(id: string, script: Group['script'], minute: number, make: () => Pick<Group, 'keys' | 'head'>): Group {
    let g = this.groups.get(id);
    if (!g) this.groups.set(id, (g = { ...make(), args: [], script, minute }));
    return g;
  }

  /** Writes everything waiting; rejects (keeping what failed for the next try) when Redis does not take it. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.groups.size ? this.flush() : undefined));
    if (!this.groups.size) return Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
    const taken = this.groups;
    this.groups = new Map();
    this.waiting = 0;
    this.flushing = this.write(taken).finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  private async write(taken: Map<string, Group>): Promise<void> {
    // A group that waited out an outage can hold many batches: it goes BATCH_RECORDS records per call, in order; what
    // is left from a call that failed stays in `taken`.
    const sent = [...taken].map(async ([id, g]) => {
      try {
        while (g.args.length) {
          const chunk = g.args.slice(0, BATCH_RECORDS);
          // The sums form first (a fraction of the arguments and of Redis's work); a batch it finds a kept record in
          // (sent again after a failure) goes as the per-record script, which skips those.
          const sums = sumsArgs(g.script, g.head, chunk);
          const written = sums && Number(await scripts[`${g.script}Sums`].run(this.client, g.keys, sums)) !== -1;
          if (!written) await scripts[g.script].run(this.client, g.keys, [...g.head, ...chunk.flat()]);
          g.args = g.args.slice(chunk.length);
        }
        taken.delete(id);
      } catch (err) {
        return err as Error;
      }
    });
    const failed = (await Promise.all(sent)).find((e) => e);
    if (!failed) return;
    // Put back what failed, ahead of what came in meanwhile, and try again later.
    let back = 0;
    for (const [id, g] of taken) {
      if (g.script === 'settleBatch') back += g.args.length;
      const newer = this.groups.get(id);
      if (newer) newer.args = g.args.concat(newer.args);
      else this.groups.set(id, g);
    }
    this.groups = new Map([...taken.keys(), ...this.groups.keys()].map((id) => [id, this.groups.get(id)!]));
    this.waiting += back;
    this.onError(failed, this.waiting);
    this.timer ??= setTimeout(() => { this.timer = undefined; void this.flush().catch(() => {}); }, RETRY_MS).unref();
    throw failed;
  }

  /** Too many records wait for a Redis that does not answer: the oldest minute's go, from the keys and the global index. */
  private dropOldest(): void {
    let oldest = Infinity;
    for (const g of this.groups.values()) oldest = Math.min(oldest, g.minute);
    let dropped = 0;
    for (const [id, g] of this.groups) {
      if (g.minute !== oldest) continue;
      this.groups.delete(id);
      if (g.script === 'settleBatch') dropped += g.args.length;
    }
    this.waiting -= dropped;
    this.onError(new Error(`${dropped} settled records dropped: more than ${MAX_WAITING} waited for Redis`), this.waiting);
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
