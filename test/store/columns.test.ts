// The memory store's columns and tables (memory/columns.ts, memory/id-table.ts): an array they replace gives its memory back at once.
import t from 'tap';
import { release, toFront } from '../../core/store/memory/columns.ts';
import { IdTable } from '../../core/store/memory/id-table.ts';
import { ExpiringMap } from '../../core/store/memory/expiring-map.ts';

t.test('toFront into a new size copies the entries and frees the old array; in place it frees nothing', async (t) => {
  const a = Int32Array.from({ length: 100 }, (_, i) => i);
  const b = toFront(a, 10, 60, 200);
  t.equal(b.length, 200);
  t.strictSame([...b.subarray(0, 50)], Array.from({ length: 50 }, (_, i) => i + 10), 'the entries from .. to, at the front');
  t.equal(a.byteLength, 0, 'the replaced array is detached: its bytes went back');
  const c = Float64Array.from({ length: 20 }, (_, i) => i / 2);
  t.equal(toFront(c, 5, 10, 20), c, 'same size: moved in place');
  t.strictSame([...c.subarray(0, 5)], [2.5, 3, 3.5, 4, 4.5]);
  t.equal(c.length, 20, 'and still whole');
  const pairs = Int32Array.from({ length: 40 }, (_, i) => i);
  const grown = toFront(pairs, 2, 20, 40, 2);
  t.strictSame([...grown.subarray(0, 36)], Array.from({ length: 36 }, (_, i) => i + 4), 'with a stride, entries of `stride` cells');
  t.equal(pairs.byteLength, 0);
});

t.test('release leaves alone what is not an array whole, and arrays small enough to live in the heap', async (t) => {
  const small = new Int32Array(16); // 64 bytes: V8 keeps it inside its heap
  release(small);
  t.equal(small.length, 16);
  const big = new Float64Array(64);
  const view = big.subarray(8, 16);
  release(view);
  t.equal(big.length, 64, 'a view does not free the buffer it shares');
  const pooled = Buffer.from('x'.repeat(100)); // a slice of Buffer's shared pool
  release(pooled);
  t.equal(pooled.toString(), 'x'.repeat(100));
  release(big);
  t.equal(big.length, 0, 'an array that is its buffer whole is freed');
});

// Without a full collection in between (V8 runs none unasked in these few ms), the array buffers in use are what the
// table or map holds now: the arrays it outgrew were freed as it grew. Keeping them (before release) held 2 + 4 + ...
// of every growth's half: in a long-lived store, until the next full collection.
t.test('an IdTable and an ExpiringMap growing to 200 000 ids hold no more array buffers than their live arrays', async (t) => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const before = process.memoryUsage().arrayBuffers;
  const table = new IdTable();
  for (let i = 1; i <= 200_000; i++) table.add(i, i, i);
  // 2^19 cells (200 000 at most three quarters full) of three int32 columns.
  const live = table.capacity * 12;
  const grown = process.memoryUsage().arrayBuffers - before;
  t.ok(grown <= live * 1.1, `table: ${(grown / 1e6).toFixed(2)} MB of array buffers, ${(live / 1e6).toFixed(2)} MB live`);
  gc();
  const before2 = process.memoryUsage().arrayBuffers;
  const m = new ExpiringMap();
  for (let i = 0; i < 200_000; i++) m.set(`request-${i}`, i);
  const grown2 = process.memoryUsage().arrayBuffers - before2;
  // Its table (as above) and its order: 2^18 settings of two int32 and a float64.
  const live2 = 2 ** 19 * 12 + 2 ** 18 * 16;
  t.ok(grown2 <= live2 * 1.1, `map: ${(grown2 / 1e6).toFixed(2)} MB of array buffers, ${(live2 / 1e6).toFixed(2)} MB live`);
  t.equal(m.size, 200_000);
  t.ok(table.find(123_456, 123_456) >= 0);
});
