// The Redis store's write-behind for what no limit reads: settled records and their rollups (per key and gateway-wide)
// wait here at most BATCH_MS and go as chunks: one per key, minute and admission minute (log-key.lua) and one per minute
// for the global log (log-global.lua), the records as one text (lua/log.lua lays the logs out) and the rollups summed
// here. A chunk has an id of its own and goes again as it is until Redis takes it, and Redis skips a chunk it holds, so
// nothing is counted twice. A process that crashes loses at most its unsent batch (records and rollups; never a limit:
// settle.lua counted spend, tokens and the lease at once).
import { randomBytes } from 'node:crypto';
import { Command } from 'ioredis';
import type { UsageRecord } from './types.ts';
import { scripts, type RedisClient } from './lua/index.ts';
import type { KeyLayout } from './redis-keys.ts';
import { COUNTER_FIELDS, recordCounters, recordDuration, recordTokens } from './rollup.ts';
import { ROLLUP_UNITS, UNIT_KEEP_MS, UNIT_MS, summaryFields } from './summary.ts';
import { DAY_MS, HOUR_ROLLUP_DAYS, ROLLUP_DAYS, minuteOf, secondOf, utcDate, utcHour } from './units.ts';

/** How long a settled record may wait before it is written. */
export const BATCH_MS = 100;
/** A chunk holds at most this many records; a batch this large is written at once (within BATCH_MS while a write is in flight). */
export const BATCH_RECORDS = 1000;
/** Records kept for a Redis that does not answer; beyond this the oldest are dropped (and reported). */
const MAX_WAITING = 100_000;
/** After a failed write, the next try. */
const RETRY_MS = 1000;

type Row = (string | number)[];

/** A record as the batch holds it: its line in a log chunk, `<time>\t<JSON>\n` (lua/log.lua). */
interface Entry { id: string; time: number; line: string; record: UsageRecord }

/** Records of one key, minute and admission minute (or of one minute, for the global log) gathering into chunks. */
interface Group { script: 'logKey' | 'logGlobal'; minute: number; keys: string[]; log: string; head: Row; entries: Entry[]; repeats: boolean }

/**
 * A chunk ready to go: sent again as it is, with its id, until Redis takes it. Its text goes to `log` (a plain HSET just
 * before the script: a script would hash every byte of it), the rest as the script's arguments.
 */
interface Chunk { script: Group['script']; minute: number; keys: string[]; log: string; head: Row; args: Row; entries: Entry[]; id: string; text: Buffer }

export interface BatchOptions { retentionMs: number; recordsPerKey: number; recordsTotal: number; markerMs: number }

/**
 * What log-key.lua adds to each of a key's six rollup hashes (totals, day, day per model, hour, hour per model, rate)
 * for `records` of one key and minute: [field, increment] pairs.
 */
export function keySums(records: UsageRecord[]): [string, number][][] {
  const per = new Map<string, { model: string; hour: string; c: number[] }>();
  const seconds = new Map<number, [number, number]>();
  let duration = 0;
  for (const r of records) {
    const time = Math.floor(r.time);
    const hour = utcHour(time);
    let p = per.get(`${hour}:${r.model}`);
    if (!p) per.set(`${hour}:${r.model}`, (p = { model: r.model, hour, c: COUNTER_FIELDS.map(() => 0) }));
    const c = recordCounters(r);
    for (let j = 0; j < COUNTER_FIELDS.length; j++) p.c[j] += c[COUNTER_FIELDS[j]];
    duration += recordDuration(r);
    const second = secondOf(time);
    let sec = seconds.get(second);
    if (!sec) seconds.set(second, (sec = [0, 0]));
    sec[0]++;
    sec[1] += recordTokens(r);
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
  add(0, 'timed', records.length);
  for (const [second, [n, tokens]] of seconds) {
    add(5, `${second}:r`, n);
    if (tokens !== 0) add(5, `${second}:t`, tokens);
  }
  return sums.map((m) => [...m]);
}

/** What log-global.lua adds to each gateway-wide rollup hash for `records`: [field, increment] pairs. */
export function globalSums(records: UsageRecord[]): [string, number][] {
  const sums = new Map<string, number>();
  for (const r of records) for (const [f, v] of summaryFields(r)) sums.set(f, (sums.get(f) ?? 0) + v);
  return [...sums];
}

/** Chunk ids: this process's random tag and a count, so no two processes' chunks share one. */
const TAG = `${randomBytes(6).toString('base64url')}.`;
let chunkCount = 0;

/** Oldest first, then by request id: the order lua/log.lua trims in. */
const byTime = (a: Entry, b: Entry) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A chunk of `entries` (at most BATCH_RECORDS) for group `g`: its arguments, after the group's head. */
function makeChunk(g: Group, entries: Entry[]): Chunk {
  for (let i = 1; i < entries.length; i++) {
    if (byTime(entries[i - 1], entries[i]) > 0) { entries.sort(byTime); break; }
  }
  // The text as bytes, written line by line: a string this large (~0.3 MB for 500 records) would be flattened into V8's
  // old large-object space, twice on its way to the socket, and stay there until the next full collection.
  let bytes = 0;
  for (const e of entries) bytes += Buffer.byteLength(e.line);
  const text = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const e of entries) at += text.write(e.line, at);
  const id = `${TAG}${(++chunkCount).toString(36)}`;
  const head = [...g.head, id, entries.length, entries[0].time, entries[entries.length - 1].time];
  const records = entries.map((e) => e.record);
  const global = g.script === 'logGlobal';
  const args = global ? [...head, ...counted(globalSums(records))] : [...head, ...entries.map((e) => e.id), ...keySums(records).flatMap(counted)];
  return { script: g.script, minute: g.minute, keys: g.keys, log: g.log, head: g.head, args, entries, id, text };
}

/** A rollup hash's pairs, after their count. */
const counted = (pairs: [string, number][]): Row => [pairs.length, ...pairs.flat()];

/** The chunks of a group's entries (a repeat named twice once). */
function chunksOf(g: Group): Chunk[] {
  let entries = g.entries;
  if (g.repeats) {
    const seen = new Set<string>();
    entries = entries.filter((e) => !seen.has(e.id) && seen.add(e.id));
  }
  const out: Chunk[] = [];
  for (let i = 0; i < entries.length; i += BATCH_RECORDS) out.push(makeChunk(g, entries.slice(i, i + BATCH_RECORDS)));
  return out;
}

export class SettleBatch {
  /** A key's records of a minute and admission minute, gathering until the batch is written. */
  private groups = new Map<string, Group>();
  /** Chunks Redis did not take, in order: they go first, as they are (the key's before the global log's). */
  private retry: Chunk[] = [];
  /** Records added and not yet in both logs. */
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

  /**
   * A record settled for the first time (`repeat`: settle.lua answered 2, settled before but maybe never written: the
   * first answer may have been lost before its record reached a batch). `markerMinute`: its admission minute, where
   * settle.lua marked it; log-key.lua writes a record only while that marker does not say kept.
   */
  add(record: UsageRecord, json: string, markerMinute: number, repeat = false): void {
    const time = Math.floor(record.time);
    const minute = minuteOf(time);
    const g = this.group(this.groups, `${record.key_id}:${minute}:${markerMinute}`, 'logKey', minute, () => {
      const k = this.layout.key(record.key_id);
      const date = utcDate(time);
      return {
        keys: [k.total, k.day(date), k.dayModels(date), k.hours(date), k.hourModels(date), k.rate(minute), k.log, k.logIndex, k.index,
          k.records, k.markers(markerMinute)],
        log: k.log,
        head: [this.opts.retentionMs, ROLLUP_DAYS * DAY_MS, HOUR_ROLLUP_DAYS * DAY_MS, this.opts.recordsPerKey, this.opts.markerMs],
      };
    });
    g.entries.push({ id: record.request_id, time, line: `${time}\t${json}\n`, record });
    if (repeat) g.repeats = true;
    this.waiting++;
    if (this.waiting > MAX_WAITING) this.dropOldest();
    // A full batch goes at once, unless a write is in flight (what waits goes after it, within BATCH_MS: a flush asked
    // for per record then would queue a write per record, each as small as one round trip's records) or failed (the
    // next try waits RETRY_MS: it would otherwise go again with every record while Redis does not answer).
    if (this.waiting >= BATCH_RECORDS && !this.flushing && !this.retry.length) void this.flush().catch(() => {});
    else this.timer ??= setTimeout(() => { this.timer = undefined; void this.flush().catch(() => {}); }, BATCH_MS).unref();
  }

  private group(into: Map<string, Group>, id: string, script: Group['script'], minute: number, make: () => Pick<Group, 'keys' | 'log' | 'head'>): Group {
    let g = into.get(id);
    if (!g) into.set(id, (g = { ...make(), entries: [], script, minute, repeats: false }));
    return g;
  }

  /** The global log's groups (one per minute) of records their keys' logs hold. */
  private globalGroups(entries: Entry[]): Chunk[] {
    const groups = new Map<string, Group>();
    for (const e of entries) {
      const minute = minuteOf(e.time);
      this.group(groups, String(minute), 'logGlobal', minute, () => {
        const g = this.layout.global;
        return {
          keys: [g.log, g.logIndex, g.index, g.records, ...ROLLUP_UNITS.map((u) => g.summary(u, Math.floor(e.time / UNIT_MS[u]) * UNIT_MS[u]))],
          log: g.log,
          head: [this.opts.retentionMs, this.opts.recordsTotal, ...ROLLUP_UNITS.map((u) => UNIT_KEEP_MS[u])],
        };
      }).entries.push(e);
    }
    return [...groups.values()].flatMap(chunksOf);
  }

  /** Writes everything waiting; rejects (keeping what failed for the next try) when Redis does not take it. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.waiting ? this.flush() : undefined));
    if (!this.waiting) return Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.write().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  /**
   * The keys' chunks first (those that failed before, then the groups waiting), then the global log's chunks of the
   * records they hold: a record another copy of made its key's log already (log-key.lua answers with its id) goes
   * from both. What fails stays in `retry`, in order.
   */
  private async write(): Promise<void> {
    let send = this.retry.filter((c) => c.script === 'logKey');
    const globals = this.retry.filter((c) => c.script === 'logGlobal');
    this.retry = [];
    for (const g of this.groups.values()) {
      const chunks = chunksOf(g);
      send.push(...chunks);
      // A repeat named twice in a group goes once.
      this.waiting -= g.entries.length - chunks.reduce((n, c) => n + c.entries.length, 0);
    }
    this.groups = new Map();
    let failed: Error | undefined;
    const held: Entry[] = [];
    while (send.length) {
      const results = await this.send(send);
      const again: Chunk[] = [];
      send.forEach((c, i) => {
        const r = results[i];
        if (r instanceof Error) {
          failed ??= r;
          this.retry.push(c);
        } else if (Array.isArray(r)) {
          // Written elsewhere already: those go; the rest of the chunk is sent again, as a new chunk (nothing of this
          // one was counted, and its text goes).
          void this.client.hdel(c.log, c.id).catch(() => {});
          const kept = new Set(r.map(String));
          const rest = c.entries.filter((e) => !kept.has(e.id));
          this.waiting -= c.entries.length - rest.length;
          if (rest.length) again.push(makeChunk({ ...c, entries: rest, repeats: false }, rest));
        } else {
          held.push(...c.entries);
        }
      });
      send = again;
    }
    const global = [...globals, ...this.globalGroups(held)];
    const results = await this.send(global);
    global.forEach((c, i) => {
      if (results[i] instanceof Error) {
        failed ??= results[i] as Error;
        this.retry.push(c);
      } else {
        this.waiting -= c.entries.length;
      }
    });
    if (!failed) return;
    this.onError(failed, this.waiting);
    // The next try in RETRY_MS, not sooner: a record added meanwhile may have set a BATCH_MS timer.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = undefined; void this.flush().catch(() => {}); }, RETRY_MS).unref();
    throw failed;
  }

  /** Each chunk's text, then its script (in that order on the connection: both go at once, past ioredis's pipeline). */
  private send(chunks: Chunk[]): Promise<unknown[]> {
    return Promise.all(chunks.map((c) => Promise.all([
      this.client.sendCommand(new Command('hset', [c.log, c.id, c.text])),
      scripts[c.script].run(this.client, c.keys, c.args),
    ]).then(([, r]) => r, (err: Error) => err)));
  }

  /** Too many records wait for a Redis that does not answer: the oldest minute's go, from the keys and the global log. */
  private dropOldest(): void {
    let oldest = Infinity;
    for (const g of this.groups.values()) oldest = Math.min(oldest, g.minute);
    for (const c of this.retry) oldest = Math.min(oldest, c.minute);
    let dropped = 0;
    for (const [id, g] of this.groups) {
      if (g.minute !== oldest) continue;
      this.groups.delete(id);
      dropped += g.entries.length;
    }
    this.retry = this.retry.filter((c) => {
      if (c.minute !== oldest) return true;
      dropped += c.entries.length;
      return false;
    });
    if (!dropped) return;
    this.waiting -= dropped;
    this.onError(new Error(`${dropped} settled records dropped: more than ${MAX_WAITING} waited for Redis`), this.waiting);
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
