// The hot path's labelled counter (core/plugin-metrics.ts) shows exactly what a prom-client counter shows for the same
// increments, in the scrape text and in get(); label sets sharing a prefix stay apart; unknown labels and bad
// increments are refused where they are made; a reload gets the same counter back.
import t from 'tap';
import { Counter, Registry } from 'prom-client';
import { counter } from '../../core/plugin-metrics.ts';

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
