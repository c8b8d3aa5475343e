// The memory store's record index past its cap: the oldest leave as new ones come (with the array compacted now and
// then), out-of-order arrivals still sort, and every listing equals what a sorted, capped list would hold.
import t from 'tap';
import { MemoryRecordIndex, recordEntry } from '../../core/store/memory-index.ts';
import type { UsageRecord } from '../../core/store/types.ts';
import { record, T0 } from './fixtures.ts';

const entry = (r: UsageRecord) => recordEntry(r, JSON.stringify(r));

for (const ids of [true, false]) t.test(`capped: the newest \`cap\` records, in (time, id) order, through many compactions${ids ? ' (a key\'s index: by id too)' : ''}`, async (t) => {
  const index = new MemoryRecordIndex(undefined, ids);
  const cap = 100;
  const kept: { score: number; id: string }[] = [];
  for (let i = 0; i < 5000; i++) {
    // Every seventh record arrives a little late (an older time than the newest).
    const time = T0 + i * 10 - (i % 7 === 0 ? 25 : 0);
    const id = `r${String(i).padStart(5, '0')}`;
    index.add(entry(record({ request_id: id, time })), cap, 0);
    kept.push({ score: time, id });
  }
  kept.sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : 1));
  const want = kept.slice(-cap).reverse();
  const got = await index.page(Infinity, -Infinity, 0, 1000);
  t.strictSame(got, want, 'newest first, exactly the newest 100');
  const oldest = want[want.length - 1];
  const first = kept[0];
  const past = kept[kept.length - cap - 1];
  t.equal(index.entry(oldest.score, oldest.id)?.id, oldest.id);
  t.equal(index.entry(oldest.score + 1, oldest.id), undefined, 'found by its time and id, not its id alone');
  t.equal(index.entry(first.score, first.id), undefined, 'the first record is gone');
  t.equal(index.entry(past.score, past.id), undefined, 'so is the newest one past the cap');
  const loaded = await index.load([want[0], past, want[50]]);
  t.strictSame(loaded.map((r) => r?.request_id), [want[0].id, undefined, want[50].id], 'load finds what is kept');
  if (ids) {
    t.equal(index.has(oldest.id), true);
    t.equal(index.has(first.id), false);
    t.equal(index.has(past.id), false);
    index.add(entry(record({ request_id: want[0].id, time: T0 })), cap, 0);
    t.strictSame(await index.page(Infinity, -Infinity, 0, 1000), want, 'a repeated id changes nothing, whatever its time');
  } else {
    t.throws(() => index.has(oldest.id), /keeps no ids/);
  }
  index.add(entry(record({ request_id: want[0].id, time: want[0].score })), cap, 0);
  t.strictSame(await index.page(Infinity, -Infinity, 0, 1000), want, 'a repeated record changes nothing');
});

t.test('aged: records older than `oldest` leave, whatever the cap', async (t) => {
  const index = new MemoryRecordIndex();
  for (let i = 0; i < 3000; i++) index.add(entry(record({ request_id: `a${i}`, time: T0 + i })), 10_000, T0 + i - 500);
  const all = await index.page(Infinity, -Infinity, 0, 10_000);
  t.equal(all.length, 501, 'only the last 500 ms (and the boundary) remain');
  t.equal(all[all.length - 1].score, T0 + 2499);
});
