// The bench's round-by-round figures (report.ts roundRatios, redisRounds, redisShare): c against b slice by slice,
// Redis's CPU slice by slice and as a share of b's, and their medians.
import t from 'tap';
import { redisRounds, redisShare, roundRatios, type TargetFigures } from '../../bench/report.ts';

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

t.test('Redis CPU round by round, for a target on Redis measured in several rounds', async (t) => {
  const redis = { calls: 1.4, byCommand: {}, cpuUs: 46 };
  const onRedis = (perRound: TargetFigures['perRound']) => ({ ...target(perRound), redis });
  t.strictSame(redisRounds(onRedis([{ rps: 1, cpuUsPerRequest: 1, redisCpuUs: 50.04 }, { rps: 1, cpuUsPerRequest: 1, redisCpuUs: 44 }, { rps: 1, cpuUsPerRequest: 1, redisCpuUs: 46.26 }])),
    { cpuUs: [50, 44, 46.3], median: 46.3 });
  t.strictSame(redisRounds(onRedis([{ rps: 1, cpuUsPerRequest: 1, redisCpuUs: 40 }, { rps: 1, cpuUsPerRequest: 1, redisCpuUs: 45 }])), { cpuUs: [40, 45], median: 42.5 });
  t.equal(redisRounds(onRedis([{ rps: 1, cpuUsPerRequest: 1, redisCpuUs: 40 }])), null, 'one round');
  t.equal(redisRounds(onRedis([{ rps: 1, cpuUsPerRequest: 1, redisCpuUs: 40 }, { rps: 1, cpuUsPerRequest: 1 }])), null, 'a round without the figure');
  t.equal(redisRounds(target([{ rps: 1, cpuUsPerRequest: 1, redisCpuUs: 40 }, { rps: 1, cpuUsPerRequest: 1, redisCpuUs: 45 }])), null, 'not on Redis');
});

t.test('Redis CPU as a share of the bare proxy\'s CPU, over the run and round by round', async (t) => {
  const redis = { calls: 1.8, byCommand: {}, cpuUs: 60 };
  const c = { ...target([{ rps: 1, cpuUsPerRequest: 1, redisCpuUs: 50 }, { rps: 1, cpuUsPerRequest: 1, redisCpuUs: 70 }, { rps: 1, cpuUsPerRequest: 1, redisCpuUs: 66 }]), redis };
  const b = { ...target([{ rps: 1, cpuUsPerRequest: 250 }, { rps: 1, cpuUsPerRequest: 280 }, { rps: 1, cpuUsPerRequest: 300 }]), cpuUsPerRequest: 300 };
  t.strictSame(redisShare(c, b), { share: 0.2, perRound: [0.2, 0.25, 0.22], median: 0.22 });
  t.strictSame(redisShare(c, { ...b, perRound: b.perRound!.slice(0, 2) }), { share: 0.2, perRound: null, median: null }, 'rounds that do not align: the run\'s share only');
  t.strictSame(redisShare(c, { ...b, perRound: [{ rps: 1, cpuUsPerRequest: 250 }, { rps: 1, cpuUsPerRequest: null }, { rps: 1, cpuUsPerRequest: 300 }] }), { share: 0.2, perRound: null, median: null }, 'a round of b without CPU');
  t.equal(redisShare(c, { ...b, cpuUsPerRequest: null }), null, 'no CPU figure for b');
  t.equal(redisShare(c, undefined), null, 'no b');
  t.equal(redisShare({ ...c, redis: undefined }, b), null, 'not on Redis');
});
