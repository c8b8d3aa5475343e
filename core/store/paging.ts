// Newest-first paging with filters over a time-scored record index (a Redis sorted set or the memory store's array).
import type { RecordFilter, UsageRecord } from './types.ts';

/** One index entry: score = record time (ms), id = request id. */
export interface IndexEntry { score: number; id: string }

export interface RecordIndex {
  /** Entries with min <= score <= max, by score then id, both descending, skipping the first `offset`. */
  page(max: number, min: number, offset: number, count: number): Promise<IndexEntry[]>;
  /** The records of these entries (of `page`), undefined where one is gone (expired or trimmed). */
  load(entries: IndexEntry[]): Promise<(UsageRecord | undefined)[]>;
}

export const MAX_PAGE = 1000;

/** A cursor is a position ("<score>:<n>": past the first n entries of that score), so new records never shift pages. */
export function parseCursor(cursor: string): { score: number; skip: number } | undefined {
  const m = /^(-?\d+):(\d+)$/.exec(cursor);
  const score = Number(m?.[1]);
  const skip = Number(m?.[2]);
  return Number.isSafeInteger(score) && Number.isSafeInteger(skip) ? { score, skip } : undefined;
}

const matches = (r: UsageRecord, f: RecordFilter): boolean =>
  (f.key === undefined || r.key_id === f.key) &&
  (f.group === undefined || r.group === f.group) &&
  (f.model === undefined || r.model === f.model) &&
  (f.status === undefined || (r.status >= f.status.min && r.status <= f.status.max)) &&
  (f.ending === undefined || r.ending === f.ending);

export async function pageRecords(index: RecordIndex, filter: RecordFilter): Promise<{ records: UsageRecord[]; cursor?: string }> {
  const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(filter.limit) || 1));
  const min = filter.from ?? -Infinity;
  let max = filter.to ?? Infinity;
  let skip = 0;
  if (filter.cursor) {
    const c = parseCursor(filter.cursor);
    // A RangeError: the caller's argument, never a store failure (guard.ts).
    if (!c) throw new RangeError('invalid records cursor');
    if (c.score <= max) ({ score: max, skip } = c);
  }
  const filtered = filter.group !== undefined || filter.model !== undefined || filter.status !== undefined || filter.ending !== undefined;
  const batch = filtered ? Math.min(MAX_PAGE, Math.max(limit + 1, 200)) : limit + 1;
  const out: UsageRecord[] = [];
  let cursor = '';
  for (;;) {
    const entries = await index.page(max, min, skip, batch);
    if (entries.length === 0) break;
    const recs = await index.load(entries);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.score === max) skip++;
      else { max = e.score; skip = 1; }
      const r = recs[i];
      if (!r || !matches(r, filter)) continue;
      // One match past the page proves there is a next page, so the last page never carries a cursor.
      if (out.length === limit) return { records: out, cursor };
      out.push(r);
      cursor = `${max}:${skip}`;
    }
    if (entries.length < batch) break;
  }
  return { records: out };
}
