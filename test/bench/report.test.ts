// The bench's round-by-round ratios (report.ts roundRatios): c against b slice by slice, and their medians.
import t from 'tap';
import { roundRatios, type TargetFigures } from '../../bench/report.ts';

const target = (perRound: TargetFigures['perRound']): TargetFigures => ({
  id: 'c', label: 'x', rps: 0, p50Ms: 0, p99Ms: 0, ok: 0, errors: 0, non2xx: 0, short: 0, dropped: 0, durationS: 0,
  rssBytes: null, rssSource: 'VmHWM', cpuUsPerRequest: null, cpuByThread: null, perRound,
});

t.test('each round\'s ratio, and the median (odd and even counts)', async (t) => {
  const b = target([{ rps: 1000, cpuUsPerRequest: 100 }, { rps: 800, cpuUsPerRequest: 125 }, { rps: 1000, cpuUsPerRequest: 100 }]);
  const c = target([{ rps: 700, cpuUsPerRequest: 150 }, { rps: 600, cpuUsPerRequest: 175 }, { rps: 750, cpuUsPerRequest: 140 }]);
  t.strictSame(roundRatios(c, b), { rps: [0.7, 0.75, 0.75], cpu: [1.5, 1.4, 1.4], medianRps: 0.75, medianCpu: 1.4 });
  const two = roundRatios(target([{ rps: 600, cpuUsPerRequest: 150 }, { rps: 700, cpuUsPerRequest: 160 }]), target([{ rps: 1000, cpuUsPerRequest: 100 }, { rps: 1000, cpuUsPerRequest: 100 }]));
  t.equal(two?.medianRps, 0.65);
  t.equal(two?.medianCpu, 1.55);
});

t.test('no CPU ratios when a round lacks a CPU figure; none at all without two rounds in both', async (t) => {
  const b = target([{ rps: 1000, cpuUsPerRequest: 100 }, { rps: 1000, cpuUsPerRequest: null }]);
  const c = target([{ rps: 700, cpuUsPerRequest: 150 }, { rps: 700, cpuUsPerRequest: 150 }]);
  t.strictSame(roundRatios(c, b), { rps: [0.7, 0.7], cpu: null, medianRps: 0.7, medianCpu: null });
  t.equal(roundRatios(target([{ rps: 1, cpuUsPerRequest: 1 }]), target([{ rps: 1, cpuUsPerRequest: 1 }])), null, 'one round');
  t.equal(roundRatios(c, target([{ rps: 1000, cpuUsPerRequest: 100 }])), null, 'rounds differ in number');
  t.equal(roundRatios(c, target([{ rps: 0, cpuUsPerRequest: 100 }, { rps: 1000, cpuUsPerRequest: 100 }])), null, 'a round with no answers');
  t.equal(roundRatios(c, undefined), null, 'no base');
});
