// A record list in Redis as a chunked log (lua/log.lua lays it out), read newest first, loading only the chunks a page
// needs; a chunk's lines beyond its count, and records past the retention, are gone. The global list is several such
// logs (keys.ts stripes), read as one (MergedLogIndex).
import type { RedisClient } from '../lua/index.ts';
import type { IndexEntry, RecordIndex } from '../paging.ts';
import type { UsageRecord } from '../types.ts';
import { MINUTE_MS } from '../units.ts';

/** A chunk spans less than this (max - min: its records lie in one minute): one whose max is past t + SPAN holds nothing at or before t. */
const SPAN = MINUTE_MS;
/** logIndex members per read, doubling from read to read: the chunks newer than a page's max cost few round trips. */
const SCAN_FIRST = 64;
const SCAN_MOST = 1024;
/** Chunk texts per HMGET. */
const GROUP = 16;

export interface LogKeys { log: string; logIndex: string }

interface Chunk { id: string; min: number; max: number; count: number }

/** One line of a chunk: its record's time and id, and its JSON, parsed only when the record is loaded. */
interface Line extends IndexEntry { json: string }

const newestFirst = (a: IndexEntry, b: IndexEntry): number => b.score - a.score || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

const ID_FIELD = '"request_id":"';

/** The record's id without parsing its JSON (a quote in a string is escaped); an id with escapes is parsed. */
function requestId(json: string): string {
  const at = json.indexOf(ID_FIELD);
  if (at >= 0) {
    const id = json.slice(at + ID_FIELD.length, json.indexOf('"', at + ID_FIELD.length));
    if (!id.includes('\\')) return id;
  }
  return (JSON.parse(json) as UsageRecord).request_id;
}

/** A chunk's lines, in its order (time, then id, ascending). */
function parseChunk(text: string): Line[] {
  const out: Line[] = [];
  for (let at = 0; at < text.length;) {
    const tab = text.indexOf('\t', at);
    if (tab < 0) break;
    let end = text.indexOf('\n', tab);
    if (end < 0) end = text.length;
    const json = text.slice(tab + 1, end);
    out.push({ score: Number(text.slice(at, tab)), id: requestId(json), json });
    at = end + 1;
  }
  return out;
}

/** The chunks of logIndex that can hold records in [min, max], highest max first, read a page at a time. */
class ChunkScan {
  private readonly client: RedisClient;
  private readonly key: string;
  private readonly hi: string;
  private readonly lo: string;
  private readonly max: number;
  private readonly ahead: Chunk[] = [];
  private next = 0;
  private read = 0;
  private size = SCAN_FIRST;
  private done = false;
  constructor(client: RedisClient, key: string, max: number, lo: string) {
    this.client = client;
    this.key = key;
    this.hi = max === Infinity ? '+inf' : String(max + SPAN);
    this.lo = lo;
    this.max = max;
  }

  /** The next chunk, not taken yet; undefined past the last. */
  async peek(): Promise<Chunk | undefined> {
    while (this.next === this.ahead.length && !this.done) await this.more();
    return this.ahead[this.next];
  }

  async take(): Promise<Chunk | undefined> {
    const c = await this.peek();
    if (c) this.next++;
    return c;
  }

  private async more(): Promise<void> {
    const flat = await this.client.zrevrangebyscore(this.key, this.hi, this.lo, 'WITHSCORES', 'LIMIT', this.read, this.size);
    this.read += flat.length / 2;
    this.done = flat.length < 2 * this.size;
    this.size = Math.min(SCAN_MOST, this.size * 2);
    for (let i = 0; i < flat.length; i += 2) {
      const [id, min, count] = flat[i].split(' ');
      // Its lowest time is past `max`: the chunk holds none of the range.
      if (Number(min) > this.max) continue;
      this.ahead.push({ id, min: Number(min), max: Number(flat[i + 1]), count: Number(count) });
    }
  }
}

export class RedisLogIndex implements RecordIndex {
  private readonly client: RedisClient;
  private readonly keys: LogKeys;
  /** Parsed chunks by id (empty: its text is gone), kept for the next pages of one listing, which read the same chunks. */
  private readonly chunks = new Map<string, Line[]>();
  /** The JSON of every record of those chunks, by id (load's source). */
  private readonly texts = new Map<string, string>();
  private readonly retentionMs: number;
  /** The oldest time kept (the list's newest less the retention), read once; `floor`: given (a merged list's). */
  private floor: Promise<number> | undefined;
  constructor(client: RedisClient, keys: LogKeys, retentionMs = Infinity, floor?: () => Promise<number>) {
    this.client = client;
    this.keys = keys;
    this.retentionMs = retentionMs;
    if (floor) this.floorOf = floor;
  }

  /** The newest record time in the list, -Infinity when empty. */
  newest(): Promise<number> {
    return this.client.zrevrange(this.keys.logIndex, 0, 0, 'WITHSCORES').then((f) => (f.length ? Number(f[1]) : -Infinity));
  }

  private floorOf = (): Promise<number> => (this.floor ??= this.newest().then((n) => n - this.retentionMs));

  /** Records the list counts (the retention aside). */
  async size(): Promise<number> {
    return Number(await this.client.hget(this.keys.log, '#')) || 0;
  }

  /** Records listed (within the retention) newer than `max`. */
  async newer(max: number): Promise<number> {
    const floor = await this.floorOf();
    const flat = await this.client.zrangebyscore(this.keys.logIndex, `(${max}`, '+inf', 'WITHSCORES');
    let n = 0;
    const straddle: Chunk[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const [id, min, count] = flat[i].split(' ');
      const c = { id, min: Number(min), max: Number(flat[i + 1]), count: Number(count) };
      if (c.min > max && c.min >= floor) n += c.count;
      else straddle.push(c);
    }
    const fetch = straddle.filter((c) => !this.chunks.has(c.id));
    const texts = fetch.length ? await this.client.hmget(this.keys.log, ...fetch.map((c) => c.id)) : [];
    fetch.forEach((c, i) => this.parsed(c, texts[i]));
    for (const c of straddle) for (const l of this.chunks.get(c.id)!) if (l.score > max && l.score >= floor) n++;
    return n;
  }

  async page(max: number, asked: number, offset: number, count: number): Promise<IndexEntry[]> {
    const min = Math.max(asked, await this.floorOf());
    if (count <= 0 || max < min) return [];
    const need = offset + count;
    const lo = min === -Infinity ? '-inf' : String(min);
    const scan = new ChunkScan(this.client, this.keys.logIndex, max, lo);
    const found: IndexEntry[] = [];
    for (;;) {
      // The chunks not taken yet hold nothing past the next one's max, and may hold a record at it with a larger id
      // (which comes first): only what is past that max is final.
      const next = await scan.peek();
      if (!next) break;
      const final = found.reduce((n, e) => (e.score > next.max ? n + 1 : n), 0);
      if (final >= need) break;
      // Take chunks until their counts cover what is missing (a guess: some of their records may lie outside the range).
      const fetch: Chunk[] = [];
      for (let want = need - final; want > 0 && fetch.length < GROUP;) {
        const c = await scan.take();
        if (!c) break;
        want -= c.count;
        const lines = this.chunks.get(c.id);
        if (lines) addLines(found, lines, min, max);
        else fetch.push(c);
      }
      if (fetch.length === 0) continue;
      const texts = await this.client.hmget(this.keys.log, ...fetch.map((c) => c.id));
      fetch.forEach((c, i) => addLines(found, this.parsed(c, texts[i]), min, max));
    }
    found.sort(newestFirst);
    return found.slice(offset, need).map(({ score, id }) => ({ score, id }));
  }

  async load(entries: IndexEntry[]): Promise<(UsageRecord | undefined)[]> {
    return entries.map((e) => {
      const j = this.texts.get(e.id);
      return j ? (JSON.parse(j) as UsageRecord) : undefined;
    });
  }

  /** A chunk's lines, but for the oldest ones beyond its count (trimmed by the cap). */
  private parsed(c: Chunk, text: string | null): Line[] {
    let lines = text ? parseChunk(text) : [];
    if (lines.length > c.count) lines = lines.slice(lines.length - c.count);
    for (const l of lines) this.texts.set(l.id, l.json);
    this.chunks.set(c.id, lines);
    return lines;
  }
}

function addLines(into: IndexEntry[], lines: Line[], min: number, max: number): void {
  for (const l of lines) if (l.score >= min && l.score <= max) into.push(l);
}

/**
 * The global list's stripes as one list: pages merged newest first, the retention counted from the newest of them all,
 * and only the newest `cap` records listed (each stripe keeps up to `cap`, so together they hold those).
 */
export class MergedLogIndex implements RecordIndex {
  private readonly parts: RedisLogIndex[];
  private readonly cap: number;
  /** Whether the stripes hold more than `cap` records, read once. */
  private over: Promise<boolean> | undefined;
  constructor(client: RedisClient, stripes: LogKeys[], retentionMs: number, cap: number) {
    let floor: Promise<number> | undefined;
    const shared = () => (floor ??= Promise.all(this.parts.map((p) => p.newest())).then((n) => Math.max(...n) - retentionMs));
    this.parts = stripes.map((keys) => new RedisLogIndex(client, keys, retentionMs, shared));
    this.cap = cap;
  }

  async page(max: number, min: number, offset: number, count: number): Promise<IndexEntry[]> {
    const pages = await Promise.all(this.parts.map((p) => p.page(max, min, 0, offset + count)));
    const merged = pages.flat().sort(newestFirst).slice(offset, offset + count);
    if (!merged.length) return merged;
    this.over ??= Promise.all(this.parts.map((p) => p.size())).then((n) => n.reduce((a, b) => a + b, 0) > this.cap);
    if (!(await this.over)) return merged;
    // The first entry's place in the whole list: those newer than `max`, then `offset`.
    const newer = max === Infinity ? 0 : (await Promise.all(this.parts.map((p) => p.newer(max)))).reduce((a, b) => a + b, 0);
    return merged.slice(0, Math.max(0, this.cap - newer - offset));
  }

  async load(entries: IndexEntry[]): Promise<(UsageRecord | undefined)[]> {
    const loaded = await Promise.all(this.parts.map((p) => p.load(entries)));
    return entries.map((_, i) => loaded.find((l) => l[i] !== undefined)?.[i]);
  }
}
