// The memory store's record index: records sorted like a Redis sorted set (time, then request id), capped and aged.
import type { IndexEntry, RecordIndex } from './paging.ts';
import type { UsageRecord } from './types.ts';

interface Entry { score: number; id: string; json: string }

const before = (a: { score: number; id: string }, b: { score: number; id: string }): boolean =>
  a.score < b.score || (a.score === b.score && a.id < b.id);

/** What a dropped record's slot holds until the array is compacted. */
const GONE: Entry = { score: -Infinity, id: '', json: '' };

export class MemoryRecordIndex implements RecordIndex {
  // Ascending from `head`; records mostly arrive in time order, so inserts land at (or near) the end. The oldest
  // leave by moving `head` (the array is compacted once half of it is dead): a full index drops one record per add,
  // and shifting the whole array each time would cost O(cap) per request.
  private entries: Entry[] = [];
  private head = 0;
  private byId = new Map<string, Entry>();

  has(id: string): boolean { return this.byId.has(id); }

  /**
   * Adds a record unless its id is present (idempotent like ZADD NX); keeps the `cap` newest and none older than `oldest`.
   * Stored as JSON, as Redis stores it, so both stores hand back the same shape (undefined fields dropped); a caller
   * adding one record to two indexes passes the text once.
   */
  add(record: Pick<UsageRecord, 'request_id' | 'time'>, cap: number, oldest: number, json = JSON.stringify(record)): void {
    if (this.byId.has(record.request_id)) return;
    const e: Entry = { score: Math.floor(record.time), id: record.request_id, json };
    const entries = this.entries;
    let i = entries.length;
    while (i > this.head && before(e, entries[i - 1])) i--;
    if (i === entries.length) entries.push(e);
    else entries.splice(i, 0, e);
    this.byId.set(e.id, e);
    let head = this.head;
    while (head < entries.length && (entries[head].score < oldest || entries.length - head > cap)) {
      this.byId.delete(entries[head].id);
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

  async load(ids: string[]): Promise<(UsageRecord | undefined)[]> {
    return ids.map((id) => {
      const e = this.byId.get(id);
      return e ? (JSON.parse(e.json) as UsageRecord) : undefined;
    });
  }
}
