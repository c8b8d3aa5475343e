// The bench's round-by-round figures (report.ts roundRatios, redisRounds, redisShare): c against b slice by slice,
// Redis's CPU slice by slice and as a share of b's, and their medians.
import t from 'tap';
import { placed, redisRounds, redisShare, roundRatios, scriptCalls, targetsMet, type TargetFigures } from '../../bench/report.ts';

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

t.test('issue 39\'s targets, met and not, with the script calls a request counted from Redis\'s commands', async (t) => {
  t.equal(scriptCalls({ evalsha: 0.12, eval: 0.01, fcall_ro: 0.02, hset: 0.7, get: 1 }), 0.15);
  const b = { ...target(undefined), id: 'b' as const, rps: 8000, cpuUsPerRequest: 120 };
  const fine = { ...target(undefined), rps: 4000, cpuUsPerRequest: 230, redis: { calls: 1, byCommand: { evalsha: 0.1, hincrby: 0.5 }, cpuUs: 40 } };
  t.equal(targetsMet(fine, b), 'targets, c: CPU 1.917× b (≤ 2: met), req/s 0.500× b (≥ 0.45: met), Redis 40 µs (≤ 50: met), script calls 0.100 (≤ 0.2: met)');
  const slow = { ...target(undefined), id: 'e' as const, rps: 2280, cpuUsPerRequest: 380, redis: { calls: 3, byCommand: { evalsha: 0.42 }, cpuUs: 97 } };
  t.equal(targetsMet(slow, b), 'targets, e: CPU 3.167× b (≤ 2: NOT met), req/s 0.285× b (≥ 0.45: NOT met), Redis 97 µs (≤ 50: NOT met), script calls 0.420 (≤ 0.2: NOT met)');
  t.match(targetsMet({ ...fine, redis: undefined }, b), /^targets, c: CPU 1\.917× b \(≤ 2: met\), req\/s 0\.500× b \(≥ 0\.45: met\)$/, 'no Redis figures on the embedded store');
  t.equal(targetsMet(fine, undefined), null, 'no base');
});

t.test('--keys on a Cluster: the API keys counted by the master of their slot, and the group\'s master', async (t) => {
  t.equal(placed({ placement: { keys: [0, 2, 0, 1, 0, 2, 1, 0], group: 1 } }, 3), '; API keys by master 4 2 2, the group\'s on master 2');
  t.equal(placed({ placement: { keys: [2], group: 2 } }, 3), '; API keys by master 0 0 1, the group\'s on master 3');
  t.equal(placed({}, 3), '', 'nothing on one Redis');
});
