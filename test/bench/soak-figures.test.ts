// The soak's minute rows from its 10 s samples, the samples it lacks named, and the first minute against the last.
import t from 'tap';
import { minuteRow, missing, verdict, type Counts, type Sample } from '../../bench/soak-figures.ts';

const MB = 2 ** 20;
const counts = (requests: number): Counts => ({ requests, errors: 0, non2xx: 0, short: 0 });
/** Samples 0 … 6·minutes: RSS and heap from `mb(i)`, the gateway's CPU 1000 µs a sample (pid 7). */
const samples = (minutes: number, mb: (i: number) => [number, number]): Sample[] =>
  Array.from({ length: minutes * 6 + 1 }, (_, i) => ({ i, rssBytes: mb(i)[0] * MB, heapBytes: mb(i)[1] * MB, cpu: new Map([[7, i * 1000]]) }));

t.test('a minute: the means of its own six samples (not the one at its start), CPU over it per request', async (t) => {
  const s = samples(2, (i) => [100 + i, 40 + (i > 6 ? 10 : 0)]);
  t.strictSame(minuteRow(0, s, counts(600)), {
    minute: 1, requests: 600, errors: 0, non2xx: 0, short: 0,
    rssMb: 103.5, heapMb: 40, rssSamples: 6, heapSamples: 6, cpuUsPerRequest: 10,
  });
  t.equal(minuteRow(1, s, counts(600)).rssMb, 109.5);
  t.equal(minuteRow(1, s, counts(600)).heapMb, 50);
});

t.test('missing readings: means of those there, and each gap named', async (t) => {
  const s = samples(2, () => [100, 40]);
  s[3].heapBytes = null;
  s[12].cpu = null;
  const rows = [minuteRow(0, s, counts(60)), minuteRow(1, s, counts(60))];
  t.equal(rows[0].heapSamples, 5);
  t.equal(rows[0].heapMb, 40);
  t.equal(rows[1].cpuUsPerRequest, null);
  t.strictSame(missing(rows, s), ['minute 1: heap 5 of 6 samples', 'minute 2: no CPU figure (a reading at its start or end failed)', '1 CPU readings failed']);
  t.strictSame(missing([minuteRow(0, samples(1, () => [1, 1]), counts(1))], samples(1, () => [1, 1])), []);
});

t.test('verdict: flat within 10 %, not flat beyond, none for one minute or a minute without samples', async (t) => {
  const rows = (rss: number[], heap: number[]) => rss.map((r, m) => ({ ...minuteRow(m, [], counts(1)), rssMb: r, heapMb: heap[m] }));
  const flat = verdict(rows([200, 205, 210], [50, 49, 54]));
  t.equal(flat.flat, true);
  t.equal(flat.rssChangePct, 5);
  t.equal(flat.heapChangePct, 8);
  t.match(flat.text, /^flat: RSS 200 → 210 MB \(\+5 %\), heap 50 → 54 MB \(\+8 %\)/);
  const grew = verdict(rows([200, 230], [50, 52]));
  t.equal(grew.flat, false);
  t.equal(grew.rssChangePct, 15);
  t.equal(verdict(rows([200, 180], [50, 50])).flat, true, '−10 % is within');
  t.equal(verdict(rows([200], [50])).flat, null);
  t.match(verdict(rows([200], [50])).text, /one minute only/);
  const none = verdict([{ ...rows([200, 200], [50, 50])[0] }, { ...minuteRow(1, [], counts(1)) }]);
  t.equal(none.flat, null);
  t.match(none.text, /no RSS or heap sample/);
});
