// The soak's minute rows from its samples (every SAMPLE_EVERY_S), the samples it lacks named, and the first minute
// against the last.
import t from 'tap';
import { minuteRow, missing, SAMPLE_EVERY_S, verdict, type Counts, type Sample } from '../../bench/soak-figures.ts';

const MB = 2 ** 20;
const counts = (requests: number): Counts => ({ requests, errors: 0, non2xx: 0, short: 0 });
const PER = 60 / SAMPLE_EVERY_S;
/**
 * Samples 0 … PER·minutes: RSS and heap from `mb(i)`, the gateway's CPU 1000 µs a sample (pid 7), and at each minute's
 * end the live heap `live(minute)`.
 */
const samples = (minutes: number, mb: (i: number) => [number, number], live = (_m: number): number | null => 30): Sample[] =>
  Array.from({ length: minutes * PER + 1 }, (_, i) => ({
    i, rssBytes: mb(i)[0] * MB, heapBytes: mb(i)[1] * MB, cpu: new Map([[7, i * 1000]]),
    ...(i > 0 && i % PER === 0 ? { liveHeapBytes: live(i / PER) === null ? null : live(i / PER)! * MB } : {}),
  }));

t.test('a minute: the means of its own samples (not the one at its start), the live heap at its end, CPU over it per request', async (t) => {
  // The samples' heap a sawtooth: 40 MB after each collection, 20 MB more just before the next (every fifth sample).
  const s = samples(2, (i) => [100 + i, 40 + (i % 5 === 4 ? 20 : i % 5 * 2) + (i > PER ? 10 : 0)], (m) => 30 + m);
  t.equal(SAMPLE_EVERY_S, 2);
  t.strictSame(minuteRow(0, s, counts(600)), {
    minute: 1, requests: 600, errors: 0, non2xx: 0, short: 0,
    // RSS 101 … 130; heap per five samples 42, 44, 46, 60, 40: mean 46.4 (sample 0, the minute's start, left out).
    rssMb: 115.5, heapMb: 46.4, liveHeapMb: 31, rssSamples: PER, heapSamples: PER, cpuUsPerRequest: PER * 1000 / 600,
  });
  t.equal(minuteRow(1, s, counts(600)).rssMb, 145.5);
  t.equal(minuteRow(1, s, counts(600)).heapMb, 56.4);
  t.equal(minuteRow(1, s, counts(600)).liveHeapMb, 32);
});

t.test('missing readings: means of those there, and each gap named', async (t) => {
  const s = samples(2, () => [100, 40], (m) => (m === 2 ? null : 30));
  s[3].heapBytes = null;
  s[PER * 2].cpu = null;
  const rows = [minuteRow(0, s, counts(60)), minuteRow(1, s, counts(60))];
  t.equal(rows[0].heapSamples, PER - 1);
  t.equal(rows[0].heapMb, 40);
  t.equal(rows[1].cpuUsPerRequest, null);
  t.equal(rows[1].liveHeapMb, null);
  t.strictSame(missing(rows, s), [
    `minute 1: heap ${PER - 1} of ${PER} samples`, 'minute 2: no live heap (the gateway\'s inspector did not answer)',
    'minute 2: no CPU figure (a reading at its start or end failed)', '1 CPU readings failed',
  ]);
  t.strictSame(missing([minuteRow(0, samples(1, () => [1, 1]), counts(1))], samples(1, () => [1, 1])), []);
});

t.test('verdict: RSS mean and live heap flat within 10 %, not flat beyond, none for one minute or a minute without them', async (t) => {
  // The samples' mean is 10 to 20 MB above the live heap here, and swings: only the live heap counts.
  const rows = (rss: number[], heap: number[], mean = (m: number) => heap[m] + (m === 0 ? 20 : 10)) =>
    rss.map((r, m) => ({ ...minuteRow(m, [], counts(1)), rssMb: r, liveHeapMb: heap[m], heapMb: mean(m) }));
  const flat = verdict(rows([200, 205, 210], [50, 49, 54]));
  t.equal(flat.flat, true);
  t.equal(flat.rssChangePct, 5);
  t.equal(flat.heapChangePct, 8);
  t.match(flat.text, /^flat: RSS 200 → 210 MB \(\+5 %\), live heap 50 → 54 MB \(\+8 %\); target: both within 10 % \(heap mean 70 → 64 MB, -8\.6 %\)$/);
  t.equal(verdict(rows([200, 200], [50, 60], () => 55)).flat, false, 'a live heap that grows 20 % is not flat, whatever the mean');
  const grew = verdict(rows([200, 230], [50, 52]));
  t.equal(grew.flat, false);
  t.equal(grew.rssChangePct, 15);
  t.equal(verdict(rows([200, 180], [50, 50])).flat, true, '−10 % is within');
  t.equal(verdict(rows([200], [50])).flat, null);
  t.match(verdict(rows([200], [50])).text, /one minute only/);
  const none = verdict([{ ...rows([200, 200], [50, 50])[0] }, { ...minuteRow(1, [], counts(1)) }]);
  t.equal(none.flat, null);
  t.match(none.text, /no RSS sample or live heap/);
});
