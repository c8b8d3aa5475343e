// The memory store's record index: records sorted like a Redis sorted set (time, then request id), capped and aged.
import type { IndexEntry, RecordIndex } from './paging.ts';
import type { UsageRecord } from './types.ts';

interface Entry { score: number; id: string; json: string }

const before = (a: { score: number; id: string }, b: { score: number; id: string }): boolean =>
  a.score < b.score || (a.score === b.score && a.id < b.id);

export class MemoryRecordIndex implements RecordIndex {
  // Ascending; records mostly arrive in time order, so inserts land at (or near) the end.
  private entries: Entry[] = [];
  private byId = new Map<string, Entry>();

  has(id: string): boolean { return this.byId.has(id); }

  /** Adds a record unless its id is present (idempotent like ZADD NX); keeps the `cap` newest and none older than `oldest`. */
  add(record: UsageRecord, cap: number, oldest: number): void {
    if (this.byId.has(record.request_id)) return;
    // Stored as JSON, as Redis stores it, so both stores hand back the same shape (undefined fields dropped).
    const e: Entry = { score: Math.floor(record.time), id: record.request_id, json: JSON.stringify(record) };
    let i = this.entries.length;
    while (i > 0 && before(e, this.entries[i - 1])) i--;
    this.entries.splice(i, 0, e);
    this.byId.set(e.id, e);
    let drop = 0;
    while (drop < this.entries.length && this.entries[drop].score < oldest) drop++;
    drop = Math.max(drop, this.entries.length - cap);
    if (drop > 0) for (const old of this.entries.splice(0, drop)) this.byId.delete(old.id);
  }

  async page(max: number, min: number, offset: number, count: number): Promise<IndexEntry[]> {
    const out: IndexEntry[] = [];
    let skipped = 0;
    for (let i = this.entries.length - 1; i >= 0 && out.length < count; i--) {
      const e = this.entries[i];
      if (e.score > max) continue;
      if (e.score < min) break;
      if (skipped < offset) { skipped++; continue; }
      out.push({ score: e.score, id: e.id });
    }
    return out;
  }

  /** Records with after < time <= until (as key-rate.lua reads them). */
  within(after: number, until: number): UsageRecord[] {
    const out: UsageRecord[] = [];
    for (let i = this.entries.length - 1; i >= 0 && this.entries[i].score > after; i--) {
      if (this.entries[i].score <= until) out.push(JSON.parse(this.entries[i].json) as UsageRecord);
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
