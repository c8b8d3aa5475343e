// ExpiringMap (core/store/expiring-map.ts): what it holds is always what a plain Map pruned the slow way would hold.
import t from 'tap';
import { ExpiringMap } from '../../core/store/expiring-map.ts';

t.test('front pruning, re-set entries, deletes and the oldest dropped', async (t) => {
  const m = new ExpiringMap();
  m.set('a', 1);
  m.set('b', 2);
  m.set('c', 3);
  m.set('a', 4); // re-set: leaves by its latest time
  t.equal(m.prune((at) => at <= 2), 2, 'b went; a was re-set later');
  t.strictSame([...m.entries()], [['a', 4], ['c', 3]]);
  m.delete('c');
  m.dropOldest();
  t.equal(m.size, 0, 'the deleted c was skipped, a dropped');
  m.dropOldest();
  t.equal(m.size, 0, 'nothing to drop');
});

t.test('with a limit, every expired entry goes, even behind a live one', async (t) => {
  const m = new ExpiringMap();
  m.set('late', 100);
  m.set('early', 1);
  t.equal(m.prune((at) => at <= 50), 2, 'below the limit only the front is pruned');
  t.equal(m.prune((at) => at <= 50, 2), 1, 'at the limit the whole map is');
  t.strictSame([...m.entries()], [['late', 100]]);
});

for (const [label, renumberAt] of [['', undefined], [', its slots renumbered from 0 again and again', 5000]] as const) t.test(`a random run of 50 000 operations matches a plain Map pruned by a full scan${label}`, async (t) => {
  let seed = 7;
  const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  const m = new ExpiringMap(renumberAt);
  const ref = new Map<string, number>();
  let clock = 0;
  let mismatches = 0;
  for (let i = 0; i < 50_000; i++) {
    clock += rand(3);
    const op = rand(10);
    const id = `id-${rand(5000)}`;
    if (op < 6) {
      m.set(id, clock);
      ref.set(id, clock);
    } else if (op < 7) {
      m.delete(id);
      ref.delete(id);
    } else if (op < 9) {
      const cut = clock - 200;
      m.prune((at) => at <= cut, 3000);
      // The same rule by hand: the front while expired (insertion order of the latest setting), then all when at the limit.
      const order = [...ref].sort((a, b) => a[1] - b[1]);
      for (const [k, at] of order) { if (at > cut) break; ref.delete(k); }
      if (ref.size >= 3000) for (const [k, at] of ref) if (at <= cut) ref.delete(k);
    } else if (m.size) {
      m.dropOldest();
      const oldest = [...ref].sort((a, b) => a[1] - b[1])[0][0];
      ref.delete(oldest);
    }
    if (m.size !== ref.size || m.get(id) !== ref.get(id)) mismatches++;
  }
  t.equal(mismatches, 0);
  t.strictSame(new Map(m.entries()), ref);
  t.strictSame([...m.values()].sort(), [...ref.values()].sort(), 'values() gives the times');
});

t.test('a time is not kept as a Map value of its own: 100 000 settings allocate no heap number each', async (t) => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const ids = Array.from({ length: 100_000 }, (_, i) => `request-${i}`);
  const used = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
  const before = used();
  const m = new ExpiringMap();
  for (let i = 0; i < ids.length; i++) m.set(ids[i], 1_767_225_600_000 + i);
  const perEntry = (used() - before) / ids.length;
  // Measured: 55 bytes per entry (the Map's entry and table share, the two array slots); with a heap number per time as
  // the Map's value, 71.
  t.ok(perEntry < 63, `${perEntry.toFixed(1)} bytes per entry`);
  t.equal(m.get('request-99999'), 1_767_225_699_999);
});
