// The hot path's labelled counter and histogram (core/plugin-metrics.ts) show exactly what prom-client's show for the
// same increments and observations, in the scrape text, in get() and summed across a cluster's workers; label sets
// sharing a prefix stay apart; unknown labels and bad values are refused where they are made; a reload gets the same
// metric back.
import t from 'tap';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { cellHistogram, counter } from '../../core/plugin-metrics.ts';

const opts = { name: 'test_things_total', help: 'Things.', labelNames: ['group', 'model', 'kind'] as const };

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  return { ours, c: counter(ours, { ...opts, labelNames: [...opts.labelNames] }), theirs, p: new Counter({ ...opts, labelNames: [...opts.labelNames], registers: [theirs] }) };
}

const incs: [Record<'group' | 'model' | 'kind', string>, number | undefined][] = [
  [{ group: 'g1', model: 'm-a', kind: 'input' }, 9],
  [{ group: 'g1', model: 'm-a', kind: 'output' }, 3],
  [{ group: 'g1', model: 'm-b', kind: 'input' }, undefined],
  [{ group: 'g2', model: 'm-a', kind: 'input' }, 0.000042],
  [{ kind: 'input', model: 'm-a', group: 'g1' }, 1], // other key order: the same series
  [{ group: 'g1', model: 'm "q"\\\n', kind: 'input' }, 2],
  [{ group: 'g1', model: 'm-a', kind: 'input' }, 0],
];

t.test('the same text and values as prom-client\'s counter, scraped twice', async (t) => {
  const { ours, c, theirs, p } = both();
  for (const [labels, n] of incs.slice(0, 4)) { c.inc(labels, n); p.inc(labels, n); }
  t.equal(await ours.metrics(), await theirs.metrics(), 'first scrape');
  for (const [labels, n] of incs.slice(4)) { c.inc(labels, n); p.inc(labels, n); }
  t.equal(await ours.metrics(), await theirs.metrics(), 'second scrape: what came after the first is added');
  const got = await (ours.getSingleMetric(opts.name) as Counter).get();
  t.same(got.values, (await p.get()).values, 'get() too');
  t.same(got.values.find((v) => v.labels.model === 'm-a' && v.labels.group === 'g1' && v.labels.kind === 'input')?.value, 10);
});

t.test('a label set is shown from its first use, before any scrape takes its counts', async (t) => {
  const { ours, c } = both();
  c.inc({ group: 'g', model: 'm', kind: 'k' }, 5);
  const text = await ours.metrics();
  t.match(text, /test_things_total\{group="g",model="m",kind="k"\} 5/);
});

t.test('an unknown label name or a bad increment is refused at the call', async (t) => {
  const { c } = both();
  t.throws(() => c.inc({ group: 'g', model: 'm', kind: 'k', extra: 'x' } as never, 1));
  t.throws(() => c.inc({ group: 'g', model: 'm', kind: 'k' }, -1));
  t.throws(() => c.inc({ group: 'g', model: 'm', kind: 'k' }, Number.NaN));
  t.throws(() => c.inc({ group: 'g', model: 'm', kind: 'k' }, Infinity));
});

t.test('asked again (a config reload), the registry\'s counter and its counts are the same', async (t) => {
  const r = new Registry();
  const a = counter(r, { ...opts, labelNames: [...opts.labelNames] });
  a.inc({ group: 'g', model: 'm', kind: 'k' }, 2);
  const b = counter(r, { ...opts, labelNames: [...opts.labelNames] });
  t.equal(a, b);
  b.inc({ group: 'g', model: 'm', kind: 'k' }, 3);
  t.match(await r.metrics(), /test_things_total\{group="g",model="m",kind="k"\} 5/);
});

t.test('a counter without labels', async (t) => {
  const r = new Registry();
  const c = counter(r, { name: 'test_plain_total', help: 'Plain.' });
  c.inc({} as never, 2);
  c.inc({} as never);
  t.match(await r.metrics(), /test_plain_total 3/);
});

const hopts = { name: 'test_wait_seconds', help: 'Waits.', labelNames: ['route', 'group'], buckets: [0.001, 0.01, 0.1, 1] };
const observations: [Record<'route' | 'group', string>, number][] = [
  [{ route: '/a', group: 'g1' }, 0.0004], [{ route: '/a', group: 'g1' }, 0.001], [{ route: '/a', group: 'g2' }, 0.05],
  [{ group: 'g1', route: '/a' }, 3], [{ route: '/b', group: 'g1' }, 0.5], [{ route: '/a', group: 'g1' }, 0.1 + 0.2],
  [{ route: '/a', group: 'g "q"\\\n' }, 0], [{ route: '/b', group: 'g1' }, -2],
];

function bothHistograms() {
  const ours = new Registry();
  const theirs = new Registry();
  const h = cellHistogram(ours, { ...hopts, labelNames: [...hopts.labelNames] as ('route' | 'group')[] });
  const p = new Histogram({ ...hopts, labelNames: [...hopts.labelNames] as ('route' | 'group')[], registers: [theirs] });
  return { ours, h, theirs, p };
}

t.test('histogram: the same text, get() and cluster sums as prom-client\'s histogram, scraped twice', async (t) => {
  const { ours, h, theirs, p } = bothHistograms();
  for (const [labels, v] of observations.slice(0, 5)) { h.observe(labels, v); p.observe(labels, v); }
  t.equal(await ours.metrics(), await theirs.metrics(), 'first scrape');
  for (const [labels, v] of observations.slice(5)) { h.observe(labels, v); p.observe(labels, v); }
  t.equal(await ours.metrics(), await theirs.metrics(), 'second scrape');
  t.same(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON(), 'get() too');
  t.match(await ours.metrics(), /test_wait_seconds_bucket\{le="0.001",route="\/a",group="g1"\} 2/);
  // A cluster of two workers with these observations each: the primary's sums.
  const cluster = async (r: Registry) => (await AggregatorRegistry.aggregate([await r.getMetricsAsJSON(), await r.getMetricsAsJSON()])).metrics();
  t.equal(await cluster(ours), await cluster(theirs), 'summed across workers');
  ours.resetMetrics();
  theirs.resetMetrics();
  t.equal(await ours.metrics(), await theirs.metrics(), 'reset');
});

t.test('histogram: unknown labels and values that are not finite are refused at the call; a reload gets it back', async (t) => {
  const { h } = bothHistograms();
  t.throws(() => h.observe({ route: '/a', group: 'g', extra: 'x' } as never, 1), /extra/);
  t.throws(() => h.observe({ route: '/a', group: 'g' }, Number.NaN));
  t.throws(() => h.observe({ route: '/a', group: 'g' }, Infinity));
  const r = new Registry();
  const a = cellHistogram(r, { ...hopts, labelNames: ['route', 'group'] });
  t.equal(cellHistogram(r, { ...hopts, labelNames: ['route', 'group'] }), a);
  t.throws(() => cellHistogram(new Registry(), { ...hopts, labelNames: ['le'] }), /reserved/);
});

t.test('histogram without labels: its one series from the start, as prom-client shows it', async (t) => {
  const ours = new Registry();
  const theirs = new Registry();
  const h = cellHistogram(ours, { name: 'test_plain_seconds', help: 'Plain.', buckets: [1, 2] });
  const p = new Histogram({ name: 'test_plain_seconds', help: 'Plain.', buckets: [1, 2], registers: [theirs] });
  t.equal(await ours.metrics(), await theirs.metrics(), 'before any observation');
  h.observe({} as never, 1.5);
  p.observe(1.5);
  t.equal(await ours.metrics(), await theirs.metrics());
});
