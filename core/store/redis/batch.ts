// The Redis store's write-behind for what no limit reads: settled records and their rollups wait at most BATCH_MS and
// go as chunks (per key, minute and admission minute: log-key.lua; per minute for the global log, each chunk to the
// next of its stripes: log-global.lua). A
// chunk goes again as it is until Redis takes it, and Redis skips one it holds: nothing counts twice. A crash loses at
// most the unsent batch, never a limit (settle.lua counted those at once).
import { randomBytes, randomInt } from 'node:crypto';
import { Command } from 'ioredis';
import type { UsageRecord } from '../types.ts';
import { scripts, type RedisClient } from '../lua/index.ts';
import { Lines, RecordSums, type Entry } from './batch-records.ts';
import { GLOBAL_STRIPES, type KeyLayout } from './keys.ts';
import { ROLLUP_UNITS, UNIT_KEEP_MS, UNIT_MS } from '../summary.ts';
import { DAY_MS, HOUR_ROLLUP_DAYS, ROLLUP_DAYS, minuteOf, utcDate } from '../units.ts';

/** How long a settled record may wait before it is written. */
export const BATCH_MS = 100;
/** Records a chunk holds at most; a batch this large is written at once. */
export const BATCH_RECORDS = 1000;
/** Records kept for a Redis that does not answer; beyond this the oldest are dropped (and reported). */
const MAX_WAITING = 100_000;
/** After a failed write, the next try. */
const RETRY_MS = 1000;

type Row = (string | number)[];

/** Where a chunk goes: a key's log and rollups (log-key.lua) or the global ones of a minute (log-global.lua). */
interface Target { script: 'logKey' | 'logGlobal'; minute: number; keys: string[]; log: string; head: Row }

/** Up to BATCH_RECORDS records of a group, with their rollups summed as they came (a chunk's, when it is made). */
interface Part { entries: Entry[]; sums: RecordSums }

/** Records of one key, minute and admission minute gathering into chunks. */
interface Group extends Target { parts: Part[]; repeats: boolean }

/**
 * A chunk, sent again as it is until Redis takes it: its text by a plain HSET to `log` (a script would hash every byte),
 * the rest as the script's arguments; `global`: its records' gateway-wide rollups.
 */
interface Chunk extends Target { args: Row; entries: Entry[]; id: string; text: Buffer; global: Map<string, number> }

export interface BatchOptions { retentionMs: number; recordsPerKey: number; recordsTotal: number; markerMs: number }

/** Chunk ids: this process's random tag and a count, so no two processes' chunks share one. */
const TAG = `${randomBytes(6).toString('base64url')}.`;
let chunkCount = 0;

/** Oldest first, then by request id: the order lua/log.lua trims in. */
const byTime = (a: Entry, b: Entry) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A chunk of `entries` for `t`: its text (the entries then point into it) and arguments (a key's names its records). */
function makeChunk(t: Target, entries: Entry[], sums: Row, global: Map<string, number>): Chunk {
  for (let i = 1; i < entries.length; i++) {
    if (byTime(entries[i - 1], entries[i]) > 0) { entries.sort(byTime); break; }
  }
  // The text as bytes: a large string is flattened into V8's old large-object space on its way to the socket
  // (docs/performance.md).
  let bytes = 0;
  for (const e of entries) bytes += e.len;
  const text = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const e of entries) {
    e.src.copy(text, at, e.at, e.at + e.len);
    e.src = text;
    e.at = at;
    at += e.len;
  }
  const id = `${TAG}${(++chunkCount).toString(36)}`;
  const head = [...t.head, id, entries.length, entries[0].time, entries[entries.length - 1].time];
  const args = t.script === 'logGlobal' ? [...head, ...sums] : [...head, ...entries.map((e) => e.id), ...sums];
  return { script: t.script, minute: t.minute, keys: t.keys, log: t.log, head: t.head, args, entries, id, text, global };
}

/** A rollup hash's pairs, after their count. */
const counted = (pairs: [string, number][]): Row => [pairs.length, ...pairs.flat()];

/** A key's chunk of `entries`, with their sums: a key's rollups as its arguments, the global ones for later. */
const keyChunk = (t: Target, entries: Entry[], sums: RecordSums): Chunk =>
  makeChunk(t, entries, sums.key.pairs().flatMap(counted), sums.global);

/** The chunks of a group's records, one per part (a repeat named twice once). */
function chunksOf(g: Group): Chunk[] {
  const seen = g.repeats ? new Set<string>() : undefined;
  const out: Chunk[] = [];
  for (const p of g.parts) {
    const entries = seen ? p.entries.filter((e) => !seen.has(e.id) && seen.add(e.id)) : p.entries;
    if (!entries.length) continue;
    out.push(keyChunk(g, entries, entries.length === p.entries.length ? p.sums : RecordSums.of(entries)));
  }
  return out;
}

/** Records in a group. */
const sizeOf = (g: Group): number => g.parts.reduce((n, p) => n + p.entries.length, 0);

export class SettleBatch {
  /** A key's records of a minute and admission minute, gathering until the batch is written. */
  private groups = new Map<string, Group>();
  private readonly lines = new Lines();
  /** Chunks Redis did not take, in order: they go first, as they are (the key's before the global log's). */
  private retry: Chunk[] = [];
  /** Records added and not yet in both logs. */
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** The global stripe of the next chunk (from a random one, so processes do not all start on the same). */
  private stripe = randomInt(GLOBAL_STRIPES);

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
   * A record settled (`repeat`: settled before, maybe never written, settle.lua's 2). `markerMinute`: where settle.lua
   * marked it; log-key.lua writes it only while that marker does not say kept.
   */
  add(record: UsageRecord, json: string, markerMinute: number, repeat = false): void {
    const time = Math.floor(record.time);
    const minute = minuteOf(time);
    const id = `${record.key_id}:${minute}:${markerMinute}`;
    let g = this.groups.get(id);
    if (!g) {
      const k = this.layout.key(record.key_id);
      const date = utcDate(time);
      this.groups.set(id, g = {
        script: 'logKey', minute, parts: [], repeats: false,
        keys: [k.total, k.day(date), k.dayModels(date), k.hours(date), k.hourModels(date), k.rate(minute), k.log, k.logIndex,
          k.markers(markerMinute)],
        log: k.log,
        head: [this.opts.retentionMs, ROLLUP_DAYS * DAY_MS, HOUR_ROLLUP_DAYS * DAY_MS, this.opts.recordsPerKey, this.opts.markerMs],
      });
    }
    let p = g.parts.at(-1);
    if (!p || p.entries.length >= BATCH_RECORDS) g.parts.push(p = { entries: [], sums: new RecordSums() });
    p.entries.push(this.lines.add(record.request_id, time, json));
    p.sums.add(record);
    if (repeat) g.repeats = true;
    this.waiting++;
    if (this.waiting > MAX_WAITING) this.dropOldest();
    // A full batch goes at once, unless a write is in flight (it goes after) or failed (the retry waits RETRY_MS).
    if (this.waiting >= BATCH_RECORDS && !this.flushing && !this.retry.length) void this.flush().catch(() => {});
    else this.timer ??= setTimeout(() => { this.timer = undefined; void this.flush().catch(() => {}); }, BATCH_MS).unref();
  }

  /** The global log's chunks (per minute) of the key chunks in `held`, which their keys' logs took whole. */
  private globalChunks(held: Chunk[]): Chunk[] {
    const byMinute = new Map<number, Chunk[]>();
    for (const c of held) {
      const list = byMinute.get(c.minute);
      if (list) list.push(c);
      else byMinute.set(c.minute, [c]);
    }
    const out: Chunk[] = [];
    for (const [minute, pieces] of byMinute) {
      const time = pieces[0].entries[0].time;
      const target = (): Target => {
        const g = this.layout.stripes[this.stripe++ % GLOBAL_STRIPES];
        return {
          script: 'logGlobal', minute, log: g.log,
          keys: [g.log, g.logIndex, ...ROLLUP_UNITS.map((u) => g.summary(u, Math.floor(time / UNIT_MS[u]) * UNIT_MS[u]))],
          head: [this.opts.retentionMs, this.opts.recordsTotal, ...ROLLUP_UNITS.map((u) => UNIT_KEEP_MS[u])],
        };
      };
      let entries: Entry[] = [];
      let sums = new Map<string, number>();
      const close = () => {
        if (entries.length) out.push(makeChunk(target(), entries, counted([...sums]), sums));
        entries = [];
        sums = new Map();
      };
      for (const c of pieces) {
        if (entries.length + c.entries.length > BATCH_RECORDS) close();
        for (const e of c.entries) entries.push(e);
        for (const [f, v] of c.global) sums.set(f, (sums.get(f) ?? 0) + v);
      }
      close();
    }
    return out;
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
   * The keys' chunks, then the global chunks of what they took (a record whose other copy is kept already goes from
   * both: log-key.lua names it). What fails stays in `retry`, in order.
   */
  private async write(): Promise<void> {
    let send = this.retry.filter((c) => c.script === 'logKey');
    const globals = this.retry.filter((c) => c.script === 'logGlobal');
    this.retry = [];
    for (const g of this.groups.values()) {
      const chunks = chunksOf(g);
      send.push(...chunks);
      // A repeat named twice in a group goes once.
      this.waiting -= sizeOf(g) - chunks.reduce((n, c) => n + c.entries.length, 0);
    }
    this.groups = new Map();
    this.lines.clear();
    let failed: Error | undefined;
    const held: Chunk[] = [];
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
          if (rest.length) again.push(keyChunk(c, rest, RecordSums.of(rest)));
        } else {
          held.push(c);
        }
      });
      send = again;
    }
    const global = [...globals, ...this.globalChunks(held)];
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
      dropped += sizeOf(g);
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
