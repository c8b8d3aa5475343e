// The memory store's record index past its cap: the oldest leave as new ones come (with the array compacted now and
// then), out-of-order arrivals still sort, and every listing equals what a sorted, capped list would hold.
import t from 'tap';
import { MemoryRecordIndex, recordEntry } from '../../core/store/memory/record-index.ts';
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

t.test('a random run with request ids as the gateway makes them (UUIDs, kept as numbers) and others, equal times and late arrivals: every listing, lookup and load equals a sorted, capped list', async (t) => {
  let seed = 11;
  // mulberry32: every bit of its output varies (an LCG's low bits would repeat with a short period)
  const rand = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return (((x ^ (x >>> 14)) >>> 0) % n);
  };
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[rand(16)]).join('');
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[rand(4)]}${hex(3)}-${hex(12)}`;
  for (const ids of [true, false]) {
    const index = new MemoryRecordIndex(undefined, ids);
    const cap = 300;
    let ref: { score: number; id: string; json: string }[] = [];
    let clock = T0;
    let mismatches = 0;
    for (let i = 0; i < 6000; i++) {
      clock += rand(3); // many records share a millisecond
      const time = clock - (rand(10) === 0 ? rand(50) : 0);
      const id = rand(5) === 0 ? `req-${rand(300)}` : rand(50) === 0 ? uuid().toUpperCase() : uuid();
      const r = record({ request_id: id, time });
      const oldest = clock - 900;
      const json = JSON.stringify(r);
      index.add(recordEntry(r, json), cap, oldest);
      // A record it holds already changes nothing; a new one goes in, then the oldest leave while too old or past the cap.
      if (!ref.some((e) => e.id === id && (ids || e.score === time))) {
        ref.push({ score: time, id, json });
        ref.sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        while (ref.length && (ref[0].score < oldest || ref.length > cap)) ref.shift();
      }
      if (i % 500 === 499) {
        const got = await index.page(Infinity, -Infinity, 0, 10_000);
        if (JSON.stringify(got) !== JSON.stringify(ref.map((e) => ({ score: e.score, id: e.id })).reverse())) mismatches++;
        const some = [ref[0], ref[rand(ref.length)], ref[ref.length - 1], { score: T0, id: 'gone', json: '' }];
        const loaded = await index.load(some.map((e) => ({ score: e.score, id: e.id })));
        if (JSON.stringify(loaded) !== JSON.stringify(some.map((e) => (e.id === 'gone' ? undefined : JSON.parse(e.json))))) mismatches++;
        for (const e of some) {
          if ((index.entry(e.score, e.id)?.json) !== (e.id === 'gone' ? undefined : e.json)) mismatches++;
          if (ids && index.has(e.id) !== (e.id !== 'gone')) mismatches++;
        }
      }
    }
    t.equal(mismatches, 0, ids ? 'a key\'s index' : 'the global index');
    t.ok(ref.length > 100, `${ref.length} records kept at the end`);
  }
});

t.test('keepText gives a kept record without a text its text, once', async (t) => {
  const index = new MemoryRecordIndex();
  const r = record({ request_id: '0b7c6f1e-2f5d-4a8e-9c3b-1d2e3f4a5b6c', time: T0 });
  index.add(recordEntry(r, undefined), 10, 0);
  t.equal(index.entry(T0, r.request_id)?.json, undefined);
  index.keepText(T0, r.request_id, 'first');
  index.keepText(T0, r.request_id, 'second');
  index.keepText(T0 + 1, r.request_id, 'another time: not this record');
  t.strictSame(index.entry(T0, r.request_id), { score: T0, id: r.request_id, key: r.key_id, json: 'first' });
});
