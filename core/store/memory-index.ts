// The memory store's record index: records sorted like a Redis sorted set (time, then request id), capped and aged.
import type { IndexEntry, RecordIndex } from './paging.ts';
import type { UsageRecord } from './types.ts';

/**
 * One record in the index. A settled record sits in two indexes (its key's and the global one) as one entry. `json` is
 * its text when the store holds it there; the file store does not (it reads texts from its file, or from the bytes
 * waiting to be written: `RecordText`), so the records it keeps cost memory for their ids, not their texts.
 */
export interface RecordEntry { score: number; id: string; key: string; json: string | undefined }

/** The texts of records whose entry no longer holds one, by id (those it cannot find are left out). */
export type RecordText = (entries: RecordEntry[]) => Map<string, string>;

export const recordEntry = (record: Pick<UsageRecord, 'request_id' | 'time' | 'key_id'>, json: string | undefined): RecordEntry =>
  ({ score: Math.floor(record.time), id: record.request_id, key: record.key_id, json });

const before = (a: { score: number; id: string }, b: { score: number; id: string }): boolean =>
  a.score < b.score || (a.score === b.score && a.id < b.id);

/** What a dropped record's slot holds until the array is compacted. */
const GONE: RecordEntry = { score: -Infinity, id: '', key: '', json: '' };

export class MemoryRecordIndex implements RecordIndex {
  // Ascending from `head`; records mostly arrive in time order, so inserts land at (or near) the end. The oldest
  // leave by moving `head` (the array is compacted once half of it is dead): a full index drops one record per add,
  // and shifting the whole array each time would cost O(cap) per request.
  private entries: RecordEntry[] = [];
  private head = 0;
  /**
   * Entries by id, for `has` (a key's index: is a request id settled, whatever the time it is settled again with).
   * The global index has none: it finds an entry by its time and id (binary search), and a Map of its 100 000 ids was
   * two updates a request and an entry the collector traced per record.
   */
  private readonly byId: Map<string, RecordEntry> | undefined;
  private readonly text?: RecordText;

  /** `ids`: keep entries by id too, for `has`. */
  constructor(text?: RecordText, ids = false) {
    this.text = text;
    this.byId = ids ? new Map() : undefined;
  }

  /** Whether a record of this request id is kept (an index made with `ids`). */
  has(id: string): boolean {
    if (!this.byId) throw new Error('this record index keeps no ids');
    return this.byId.has(id);
  }

  /** The entry of the record with this time and id, when kept. */
  entry(score: number, id: string): RecordEntry | undefined {
    const entries = this.entries;
    let lo = this.head, hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(entries[mid], { score, id })) lo = mid + 1;
      else hi = mid;
    }
    const e = entries[lo];
    return e !== undefined && e.score === score && e.id === id ? e : undefined;
  }

  /**
   * Adds a record's entry unless its id is present (idempotent like ZADD NX); keeps the `cap` newest and none older than
   * `oldest`. The text is JSON, as Redis stores it, so both stores hand back the same shape (undefined fields dropped);
   * the store puts one entry in two indexes.
   */
  add(e: RecordEntry, cap: number, oldest: number): void {
    if (this.byId ? this.byId.has(e.id) : this.entry(e.score, e.id)) return;
    const entries = this.entries;
    let i = entries.length;
    while (i > this.head && before(e, entries[i - 1])) i--;
    if (i === entries.length) entries.push(e);
    else entries.splice(i, 0, e);
    this.byId?.set(e.id, e);
    let head = this.head;
    while (head < entries.length && (entries[head].score < oldest || entries.length - head > cap)) {
      this.byId?.delete(entries[head].id);
      entries[head++] = GONE; // until the compaction, the slot must not keep the record's text alive
    }
    if (head > 1024 && head * 2 > entries.length) {
      this.entries = entries.slice(head);
      head = 0;
    }
    this.head = head;
  }

  async page(max: number, min: number, offset: number, count: number): Promise<IndexEntry[]> {
    const out: IndexEntry[] = [];
    let skipped = 0;
    for (let i = this.entries.length - 1; i >= this.head && out.length < count; i--) {
      const e = this.entries[i];
      if (e.score > max) continue;
      if (e.score < min) break;
      if (skipped < offset) { skipped++; continue; }
      out.push({ score: e.score, id: e.id });
    }
    return out;
  }

  async load(wanted: IndexEntry[]): Promise<(UsageRecord | undefined)[]> {
    const found = wanted.map((w) => this.entry(w.score, w.id));
    const away = found.filter((e): e is RecordEntry => e !== undefined && e.json === undefined);
    const read = away.length && this.text ? this.text(away) : undefined;
    return found.map((e) => {
      const json = e && (e.json ?? read?.get(e.id));
      return json === undefined ? undefined : (JSON.parse(json) as UsageRecord);
    });
  }
}
