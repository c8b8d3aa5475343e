// Records on their way to the file store's writer, as bytes: what goes in comes out, in order, whatever the text
// (non-ASCII, astral, empty, control characters, long enough to grow the buffer many times), batch after batch.
import t from 'tap';
import { release as freeBytes } from '../../core/store/memory/columns.ts';
import { RecordBytes, readRecords } from '../../core/store/file/record-bytes.ts';
import type { RecordRow } from '../../core/store/file/rows.ts';
import { seeded } from '../helpers/random.ts';

const ALPHABET = ['a', 'Z', '0', ' ', '"', '\\', '\t', '\n', '\u0000', 'é', 'ß', '中', '𝄞', '😀', '\u2028'];

function text(rand: () => number, max: number): string {
  let s = '';
  const n = Math.floor(rand() * max);
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

t.test('records come out as they went in, in order, across growth and batches', async (t) => {
  const rand = seeded(7);
  const bytes = new RecordBytes();
  for (let batch = 0; batch < 5; batch++) {
    const want: RecordRow[] = [];
    const n = [0, 1, 3, 400, 2000][batch];
    for (let i = 0; i < n; i++) {
      // Now and then a text far longer than the buffer's first size, so it grows from within one record.
      const json = i % 500 === 499 ? 'x'.repeat(200_000) + text(rand, 20) : JSON.stringify({ t: text(rand, 300), i });
      const row = { key: text(rand, 12), id: `r-${batch}-${i}-${text(rand, 4)}`, time: 1_700_000_000_000 + Math.floor(rand() * 1e9) + (i % 2 ? 0.5 : 0), json };
      want.push(row);
      bytes.add(row.key, row.id, row.time, row.json);
    }
    t.strictSame([...readRecords(bytes.view())], want, `batch ${batch}: read in place`);
    const taken = bytes.take();
    t.equal([...readRecords(bytes.view())].length, 0, `batch ${batch}: nothing left in place`);
    t.strictSame([...readRecords(taken)], want, `batch ${batch}: read from the taken copy`);
    t.equal(taken.byteOffset, 0, 'the copy has a buffer of its own');
    t.equal(taken.buffer.byteLength, taken.byteLength, 'exactly its size (what a postMessage copies)');
  }
});

t.test('a taken copy stays whole while the list is reused', async (t) => {
  const bytes = new RecordBytes();
  bytes.add('k', 'a', 1, '{"a":1}');
  const first = bytes.take();
  bytes.add('k', 'b', 2, '{"b":2}');
  t.strictSame([...readRecords(first)], [{ key: 'k', id: 'a', time: 1, json: '{"a":1}' }]);
  t.strictSame([...readRecords(bytes.view())], [{ key: 'k', id: 'b', time: 2, json: '{"b":2}' }]);
});

t.test('a written batch frees its own bytes at once, and never a buffer it shares', async (t) => {
  const bytes = new RecordBytes();
  // A batch of more than 64 bytes: a smaller array lives in V8's heap and is left to the collector (memory/columns.ts release).
  bytes.add('k', 'a', 1, JSON.stringify({ a: 'x'.repeat(80) }));
  const taken = bytes.take();
  const size = taken.byteLength;
  t.ok(size > 0);
  freeBytes(taken);
  t.equal(taken.byteLength, 0, 'detached: its memory went back');
  t.equal(taken.buffer.byteLength, 0);
  // A view into a larger buffer (the list's own, or a pooled Buffer) is left alone: the rest of it is still in use.
  bytes.add('k', 'b', 2, '{"b":2}');
  const view = bytes.view();
  freeBytes(view);
  t.strictSame([...readRecords(bytes.view())], [{ key: 'k', id: 'b', time: 2, json: '{"b":2}' }], 'the list is untouched');
  const pooled = Buffer.from('abc');
  freeBytes(pooled);
  t.equal(pooled.toString(), 'abc', "a pooled Buffer's slab is not detached");
});
