// The memory store's record index: records sorted like a Redis sorted set (time, then request id), capped and aged.
import type { IndexEntry, RecordIndex } from '../paging.ts';
import type { UsageRecord } from '../types.ts';
import { slots, slotsToFront, toFront } from './columns.ts';
import { H, IdTable, hashId } from './id-table.ts';

/** A record as the index gives it out; `json` when the index holds its text (the file store's reads it: RecordText). */
export interface RecordEntry { score: number; id: string; key: string; json: string | undefined }

/** The texts of records whose entry no longer holds one, by id (those it cannot find are left out). */
export type RecordText = (entries: RecordEntry[]) => Map<string, string>;

export const recordEntry = (record: Pick<UsageRecord, 'request_id' | 'time' | 'key_id'>, json: string | undefined): RecordEntry =>
  ({ score: Math.floor(record.time), id: record.request_id, key: record.key_id, json });

/** A lowercase UUID (the gateway's request ids) as four 32-bit words in w[at..at + 3], ordered as the text; else false. */
function packUuid(id: string, w: Int32Array, at: number): boolean {
  if (id.length !== 36) return false;
  let word = 0;
  let n = 0;
  let k = at;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false; // '-'
      continue;
    }
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (v < 0) return false;
    word = (word << 4) | v;
    if (++n === 8) {
      w[k++] = word;
      word = 0;
      n = 0;
    }
  }
  return true;
}

const hex8 = (x: number) => (x >>> 0).toString(16).padStart(8, '0');

function unpackUuid(w: Int32Array, at: number): string {
  const s = hex8(w[at]) + hex8(w[at + 1]) + hex8(w[at + 2]) + hex8(w[at + 3]);
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/** An id being looked for, packed once (search). */
const probe = new Int32Array(4);
const MIN_CAPACITY = 16;

export class MemoryRecordIndex implements RecordIndex {
  // Entries in columns ascending by (time, id) from #head to #len (inserts land near the end; the oldest leave by
  // moving #head), not an object per entry for the collector to trace (docs/performance.md).
  #scores = new Float64Array(0);
  /** A UUID id's words, 4 per entry; #odd holds any other id (and undefined for a UUID). */
  #words = new Int32Array(0);
  // Fixed-length like the typed columns; #odd (ids that are not UUIDs) and #texts made only once an entry needs them.
  #odd: (string | undefined)[] | undefined;
  #keys = slots(0);
  #texts: (string | undefined)[] | undefined;
  #len = 0;
  #head = 0;
  /** A key's index knows its ids (for `has`), each entry's hash in #h to take it out; the global one searches by time. */
  readonly #ids: IdTable | undefined;
  #h: Int32Array | undefined;
  readonly #text?: RecordText;

  /** `ids`: know ids without their time, for `has`. */
  constructor(text?: RecordText, ids = false) {
    this.#text = text;
    this.#ids = ids ? new IdTable() : undefined;
    this.#h = ids ? new Int32Array(0) : undefined;
  }

  /** Whether a record of this request id is kept (an index made with `ids`). */
  has(id: string): boolean {
    if (!this.#ids) throw new Error('this record index keeps no ids');
    hashId(id);
    return this.#ids.find(H[0], H[1]) >= 0;
  }

  /** The record with this time and id, when kept. */
  entry(score: number, id: string): RecordEntry | undefined {
    const i = this.#find(score, id);
    return i < 0 ? undefined : { score, id, key: this.#keys[i]!, json: this.#texts?.[i] };
  }

  /** The text of a kept record that holds none (the file store's, when its writer stops). */
  keepText(score: number, id: string, json: string): void {
    const i = this.#find(score, id);
    if (i >= 0 && this.#texts?.[i] === undefined) (this.#texts ??= slots(this.#scores.length))[i] = json;
  }

  /** Adds a record unless its id is present (like ZADD NX); keeps the `cap` newest and none older than `oldest`. */
  add(e: RecordEntry, cap: number, oldest: number): void {
    const uuid = packUuid(e.id, probe, 0);
    if (this.#ids ? this.has(e.id) : this.#find(e.score, e.id, uuid) >= 0) return;
    if (this.#len === this.#scores.length) this.#reserve();
    let i = this.#len;
    while (i > this.#head && this.#cmp(i - 1, e.score, e.id, uuid) > 0) i--;
    this.#insertAt(i, e, uuid);
    while (this.#head < this.#len && (this.#scores[this.#head] < oldest || this.#len - this.#head > cap)) this.#drop();
    if (this.#head > 1024 && this.#head * 2 > this.#len) this.#move(this.#scores.length);
  }

  async page(max: number, min: number, offset: number, count: number): Promise<IndexEntry[]> {
    const out: IndexEntry[] = [];
    let skipped = 0;
    for (let i = this.#len - 1; i >= this.#head && out.length < count; i--) {
      const score = this.#scores[i];
      if (score > max) continue;
      if (score < min) break;
      if (skipped < offset) { skipped++; continue; }
      out.push({ score, id: this.#idAt(i) });
    }
    return out;
  }

  async load(wanted: IndexEntry[]): Promise<(UsageRecord | undefined)[]> {
    const found = wanted.map((w) => this.entry(w.score, w.id));
    const away = found.filter((e): e is RecordEntry => e !== undefined && e.json === undefined);
    const read = away.length && this.#text ? this.#text(away) : undefined;
    return found.map((e) => {
      const json = e && (e.json ?? read?.get(e.id));
      return json === undefined ? undefined : (JSON.parse(json) as UsageRecord);
    });
  }

  #idAt(i: number): string { return this.#odd?.[i] ?? unpackUuid(this.#words, 4 * i); }

  /** Entry i against (score, id): negative before it, 0 the same, positive after; `uuid`: id is packed in `probe`. */
  #cmp(i: number, score: number, id: string, uuid: boolean): number {
    const s = this.#scores[i];
    if (s !== score) return s < score ? -1 : 1;
    if (uuid && this.#odd?.[i] === undefined) {
      const w = this.#words;
      for (let k = 0; k < 4; k++) {
        const a = w[4 * i + k] >>> 0, b = probe[k] >>> 0;
        if (a !== b) return a < b ? -1 : 1;
      }
      return 0;
    }
    const other = this.#idAt(i);
    return other < id ? -1 : other > id ? 1 : 0;
  }

  /** The entry of (score, id), or -1 (binary search); `uuid`: id is packed in `probe` already. */
  #find(score: number, id: string, uuid = packUuid(id, probe, 0)): number {
    let lo = this.#head, hi = this.#len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#cmp(mid, score, id, uuid) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.#len && this.#cmp(lo, score, id, uuid) === 0 ? lo : -1;
  }

  #insertAt(i: number, e: RecordEntry, uuid: boolean): void {
    const len = this.#len;
    if (i < len) {
      this.#scores.copyWithin(i + 1, i, len);
      this.#words.copyWithin(4 * (i + 1), 4 * i, 4 * len);
      this.#h?.copyWithin(2 * (i + 1), 2 * i, 2 * len);
    }
    this.#scores[i] = e.score;
    if (uuid) this.#words.set(probe, 4 * i);
    if (!uuid) this.#odd ??= slots(this.#scores.length);
    if (e.json !== undefined) this.#texts ??= slots(this.#scores.length);
    if (i < len) {
      this.#odd?.copyWithin(i + 1, i, len);
      this.#keys.copyWithin(i + 1, i, len);
      this.#texts?.copyWithin(i + 1, i, len);
    }
    if (this.#odd) this.#odd[i] = uuid ? undefined : e.id;
    this.#keys[i] = e.key;
    if (this.#texts) this.#texts[i] = e.json;
    if (this.#ids) {
      hashId(e.id);
      this.#ids.add(H[0], H[1], 0);
      this.#h![2 * i] = H[0];
      this.#h![2 * i + 1] = H[1];
    }
    this.#len++;
  }

  /** The oldest entry leaves; its slots no longer keep its strings alive. */
  #drop(): void {
    const i = this.#head++;
    if (this.#ids) {
      this.#ids.remove(this.#ids.find(this.#h![2 * i], this.#h![2 * i + 1]));
      this.#ids.shrink();
    }
    if (this.#odd) this.#odd[i] = undefined;
    this.#keys[i] = undefined;
    if (this.#texts) this.#texts[i] = undefined;
  }

  /** Room for one more entry: the live ones moved to the front, into columns twice as large when at least three quarters are live. */
  #reserve(): void {
    const live = this.#len - this.#head;
    this.#move(live * 4 >= this.#scores.length * 3 ? Math.max(MIN_CAPACITY, this.#scores.length * 2) : this.#scores.length);
  }

  /** The live entries moved to the front of columns of `capacity` entries. */
  #move(capacity: number): void {
    const from = this.#head, to = this.#len;
    this.#scores = toFront(this.#scores, from, to, capacity);
    this.#words = toFront(this.#words, from, to, capacity, 4);
    if (this.#h) this.#h = toFront(this.#h, from, to, capacity, 2);
    if (this.#odd) this.#odd = slotsToFront(this.#odd, from, to, capacity);
    this.#keys = slotsToFront(this.#keys, from, to, capacity);
    if (this.#texts) this.#texts = slotsToFront(this.#texts, from, to, capacity);
    this.#len = to - from;
    this.#head = 0;
  }
}
