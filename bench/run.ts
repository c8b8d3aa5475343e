// `npm run bench`: direct upstream vs bare http-proxy-3 vs the gateway, same load, one run, so ratios are comparable.
import { createHistogram } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { stop } from './children.ts';
import { helpAndExit, LOCAL_CLUSTER, number, redisFor, whole, withUsage } from './options.ts';
import { startCluster } from '../scripts/redis-cluster.ts';
import { check, measure, type LoadOptions } from './load.ts';
import { measureWrk, wrkInstalled } from './wrk.ts';
import { report, type TargetFigures } from './report.ts';
import { setUpGateways, startUpstream, storeKind, storeLabel, targets, type GatewaySetup, type TargetId } from './targets.ts';
import { cpuDelta, threadDelta, treeCpu, treeThreadCpu } from './proc.ts';
import { perRequest, RedisInfo, type RedisSample } from './redis-info.ts';

const usage = `usage: node bench/run.ts [--connections N] [--duration S] [--warmup S] [--only a,b,c,e] [--stream] [--store file|redis|redis-cluster] [--workers N] [--keys N] [--wrk]
  a = direct to the static upstream, b = bare http-proxy-3, c = the gateway (full chain),
  d = the gateway translating (chat client, Anthropic-format group; whole answers only),
  e = the gateway as an operator configures it (bench/gateway.operator.yaml: platforms, groups and keys only, so the
    shipped routes and pipelines; accounts without a concurrency cap; log lines to a file). c is the tuned config
    (bench/gateway.bench.yaml: its own route list, capped accounts, logs to /dev/null). The report checks c and e
    against issue 39's targets: CPU ≤ 2.0× b, req/s ≥ 0.45× b, on Redis ≤ 50 µs and ≤ 0.2 script calls a request
  --store redis: the gateway targets keep their state in Redis (REDIS_URL, else 127.0.0.1:6379) instead of the
    embedded store (a SQLite file in a fresh temp folder); the report adds Redis's own calls and CPU per request
  --store redis-cluster: as redis, on a 3-master Redis Cluster the bench starts (its own redis-server processes on free
    ports, stopped at the end); calls and CPU are summed over the masters, and the busiest one's share of CPU is shown
  --workers N (1 to 16): the gateway targets run as a cluster of N worker processes; CPU and peak RSS are summed over
    the primary and its workers. Without --store redis they cannot share the embedded store's file: each worker then
    keeps its state in memory (":memory:"), its own limits and usage; the report's header says which
  --keys N (1 to 64): the gateway targets c and e declare N API keys of the one group, same limits (the config's key
    and copies of it, id and secret suffixed -2, -3...; written to the run's temp folder), and the load cycles through
    them request by request on each connection (autocannon's requests, wrk's request()), so each gets 1/N of it.
    A key's state lives on one hash slot: on a Cluster several keys spread over the masters, and the report says which
    master serves each key's slot and the group's. a, b and d are unaffected (d keeps its one translated key)
  --wrk: the load from wrk (Debian's package, one thread) instead of autocannon, which on 2 cores takes CPU from the
    targets; answers are checked as with autocannon; p50/p99 from wrk's percentiles (100 quantiles per slice)
  --stream: streamed answers of about a second each (20 chunks 50 ms apart), so N streams are in flight at once;
    a probe (its own connection per request, one started every 20 ms, at most 20 in flight, in a worker thread) sends
    the same request during the measured window and times it from sending to the first body byte (ttfb p50, p99) and
    to the first frame with content; the c − b differences of both p99s against the issue's target (at most 5 ms).
    The gateway holds a stream's opening frames until its first content (proxy first_content_ms), which the upstream
    sends 50 ms after them, so its ttfb carries those 50 ms. The probe's answers count in CPU µs/req's divisor
  Every answer is checked: short = 2xx answers whose body is shorter than the target's answer to the check request
    or does not end as it does (for a stream, its last frames and data: [DONE]); dropped = requests that got neither
    an answer nor an error (autocannon reconnects silently when a server closes a connection mid-answer), counted
    per connection as sent − answered − errors − the one still in flight at the end, so at least that many
    (after such a cut autocannon may misread that connection's next answer, which then counts as short too).
    All complete: errors, non-2xx, short and dropped all 0
  --rounds N (1 to 20): every target runs from the start and each is measured in N slices of duration / N seconds
    (whole seconds, at least 1: autocannon ends a run on a whole second),
    the targets taking turns (a, b, c, d, e, a, b, ...), only one loaded at a time: a change of the machine's speed during
    the run (seen on shared VMs: the bare proxy's CPU per request drifting from 176 to 240 µs within two minutes) then
    falls on every target alike. The first slice follows the warm-up; each later one follows 1 s of its own, not
    counted (new connections). p50 and p99 are over all slices. --stream takes --rounds 1
  defaults: --connections 50 (at most 5000) --duration 10 --warmup 2 --only a,b,c,d,e --store file --workers 1 --keys 1
    --rounds 5 (1 with --stream)`;

interface Parsed { opts: LoadOptions; only: Set<TargetId>; setup: GatewaySetup; rounds: number; wrk: boolean }

/** Before each slice after a target's first: its new connections warm up this long, not counted. */
const REWARM_S = 1;

/** --rounds: 1 to 20; a streamed run's ttfb probe figures are per window, so it runs one round. */
function roundsOf(value: string, stream: boolean): number {
  const rounds = Math.round(number(value, 'rounds', 1, 20));
  if (stream && rounds > 1) throw new Error('--rounds: a --stream run measures each target in one window (--rounds 1)');
  return rounds;
}

function parse(): Parsed {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      only: { type: 'string', default: 'a,b,c,d,e' },
      stream: { type: 'boolean', default: false },
      store: { type: 'string', default: 'file' },
      workers: { type: 'string', default: '1' },
      keys: { type: 'string', default: '1' },
      rounds: { type: 'string' },
      wrk: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) helpAndExit(usage);
  const only = new Set(values.only.split(',').map((s) => s.trim()).filter(Boolean));
  for (const id of only) if (!targets.some((t) => t.id === id)) throw new Error(`--only: unknown target "${id}" (use a, b, c, d, e)`);
  if (only.size === 0) throw new Error('--only: name at least one target');
  return {
    opts: {
      connections: Math.round(number(values.connections, 'connections', 1, 5000)),
      duration: number(values.duration, 'duration', 1, 600),
      warmup: number(values.warmup, 'warmup', 0, 60),
      stream: values.stream,
    },
    only: only as Set<TargetId>,
    setup: {
      redis: redisFor(values.store, { cluster: true }), workers: Math.round(number(values.workers, 'workers', 1, 16)),
      keys: whole(values.keys, 'keys', 1, 64),
    },
    rounds: roundsOf(values.rounds ?? (values.stream ? '1' : '5'), values.stream),
    wrk: values.wrk,
  };
}

/** What a target's slices add up to. */
interface Tally {
  ok: number; errors: number; non2xx: number; short: number; dropped: number; durationS: number; answered: number;
  cpuUs: number; cpuSeen: boolean; threads: { main: number; v8: number; other: number } | null;
  redis: RedisSample | null; last?: Awaited<ReturnType<typeof measure>>;
  perRound: NonNullable<TargetFigures['perRound']>;
}

const zeroRedis = (): RedisSample => ({ calls: new Map(), cpuS: 0 });

async function main(): Promise<void> {
  const { opts, only, setup, rounds, wrk } = withUsage(usage, parse);
  if (wrk && !wrkInstalled()) throw new Error('--wrk: wrk is not installed (Debian: apt-get install wrk)');
  // --store redis-cluster: a 3-master Cluster of its own, stopped at the end.
  const cluster = setup.redis === LOCAL_CLUSTER ? await startCluster() : undefined;
  if (cluster) setup.redis = cluster.url;
  try {
    await runTargets(setup, opts, only, rounds, wrk);
  } finally {
    await cluster?.stop();
  }
}

async function runTargets(setup: GatewaySetup, opts: ReturnType<typeof parse>['opts'], only: Set<TargetId>, rounds: number, wrk: boolean): Promise<void> {
  const drive = wrk ? measureWrk : measure;
  setUpGateways(setup);
  const redisInfo = setup.redis ? new RedisInfo(setup.redis) : undefined;
  const upstream = await startUpstream();
  const figures: TargetFigures[] = [];
  const chosen = targets.filter((t) => only.has(t.id) && !(opts.stream && t.id === 'd'));
  // The bare proxy and the gateway run from node's compile cache (targets.ts); each is started and stopped once
  // first, so that the cache holds them in every measured run, the first on a fresh machine included.
  for (const target of chosen.filter((t) => t.id !== 'a')) await (await target.start(upstream.child, upstream.url)).stop();
  // Every target runs from the start; only one is loaded at a time. With --rounds N each is measured in N slices, the
  // targets taking turns, so a change of the machine's speed during the run falls on all of them alike.
  const running: Awaited<ReturnType<(typeof chosen)[number]['start']>>[] = [];
  try {
    for (const target of chosen) running.push(await target.start(upstream.child, upstream.url));
    const answers = await Promise.all(running.map((r) => check(r.url, opts.stream, r.key)));
    // Every key of a --keys spread answers before the load starts (the first was checked above).
    for (const r of running) for (const key of r.spread?.keys.slice(1) ?? []) await check(r.url, opts.stream, key);
    // On a Cluster, which master serves each key's slot and the group's.
    const placements = await Promise.all(running.map(async (r) => {
      const masters = r.spread && await redisInfo?.masters([...r.spread.ids.map((id) => `k:${id}`), `g:${r.spread.group}`]);
      return masters ? { keys: masters.slice(0, -1), group: masters.at(-1)! } : undefined;
    }));
    const tallies: Tally[] = chosen.map(() => ({
      ok: 0, errors: 0, non2xx: 0, short: 0, dropped: 0, durationS: 0, answered: 0, cpuUs: 0, cpuSeen: false, threads: null, redis: null,
      perRound: [],
    }));
    const latencies = chosen.map(() => createHistogram());
    const slice = Math.max(1, Math.round(opts.duration / rounds));
    for (let round = 0; round < rounds; round++) {
      for (const [i, target] of chosen.entries()) {
        const r = running[i];
        const tally = tallies[i];
        process.stderr.write(`bench: ${target.id} ${target.label}: ${round === 0 ? opts.warmup : REWARM_S} s warm-up + ${slice} s at ${opts.connections} connections${rounds > 1 ? ` (round ${round + 1} of ${rounds})` : ''}\n`);
        // The server's CPU time and (for a gateway on Redis) Redis's own, over the measured window only.
        let cpu0: Map<number, number> | null = null;
        let cpu1: Map<number, number> | null = null;
        let threads0: ReturnType<typeof treeThreadCpu> = null;
        let threads1: ReturnType<typeof treeThreadCpu> = null;
        const onRedis = redisInfo && target.id !== 'a' && target.id !== 'b';
        let before: Promise<RedisSample> | undefined;
        const load = await drive(r.url, { ...opts, duration: slice, warmup: round === 0 ? opts.warmup : REWARM_S }, { key: r.key, keys: r.spread?.keys, check: answers[i] }, {
          start: () => { cpu0 = treeCpu(r.pid); threads0 = treeThreadCpu(r.pid); if (onRedis) before = redisInfo.sample(); },
          end: () => { cpu1 = treeCpu(r.pid); threads1 = treeThreadCpu(r.pid); },
        }, latencies[i]);
        let redisCpuS: number | undefined;
        if (onRedis && before) {
          const [b, a] = [await before, await redisInfo.sample()];
          const acc = (tally.redis ??= zeroRedis());
          for (const [cmd, n] of a.calls) acc.calls.set(cmd, (acc.calls.get(cmd) ?? 0) + n - (b.calls.get(cmd) ?? 0));
          redisCpuS = a.cpuS - b.cpuS;
          acc.cpuS += redisCpuS;
          if (a.shardCpuS) acc.shardCpuS = a.shardCpuS.map((s, j) => (acc.shardCpuS?.[j] ?? 0) + s - (b.shardCpuS?.[j] ?? 0));
        }
        tally.ok += load.ok; tally.errors += load.errors; tally.non2xx += load.non2xx; tally.short += load.short;
        tally.dropped += load.dropped; tally.durationS += load.durationS;
        // The ttfb probe's answers were served in the window too.
        const answered = load.ok + load.non2xx + (load.ttfb?.answered ?? 0);
        tally.answered += answered;
        const cpuUs = cpu0 !== null && cpu1 !== null ? cpuDelta(cpu0, cpu1) : null;
        if (cpuUs !== null) { tally.cpuUs += cpuUs; tally.cpuSeen = true; }
        tally.perRound.push({
          rps: load.durationS > 0 ? load.ok / load.durationS : 0,
          cpuUsPerRequest: cpuUs !== null && answered > 0 ? cpuUs / answered : null,
          ...(redisCpuS !== undefined && answered > 0 ? { redisCpuUs: (redisCpuS * 1e6) / answered } : {}),
        });
        if (threads0 !== null && threads1 !== null) {
          const d = threadDelta(threads0, threads1);
          const t = (tally.threads ??= { main: 0, v8: 0, other: 0 });
          t.main += d.main; t.v8 += d.v8; t.other += d.other;
        }
        tally.last = load;
      }
    }
    for (const [i, target] of chosen.entries()) {
      const tally = tallies[i];
      const n = tally.answered;
      const rss = await running[i].rss();
      figures.push({
        id: target.id, label: target.label,
        rps: tally.durationS > 0 ? tally.ok / tally.durationS : 0,
        p50Ms: tally.last!.p50Ms, p99Ms: tally.last!.p99Ms, // of the histogram every slice recorded into
        ok: tally.ok, errors: tally.errors, non2xx: tally.non2xx, short: tally.short, dropped: tally.dropped,
        durationS: round3(tally.durationS), ttfb: tally.last!.ttfb,
        rssBytes: rss.bytes, rssSource: rss.source,
        cpuUsPerRequest: tally.cpuSeen && n > 0 ? tally.cpuUs / n : null,
        cpuByThread: tally.threads && n > 0 ? { main: tally.threads.main / n, v8: tally.threads.v8 / n, other: tally.threads.other / n } : null,
        redis: tally.redis && n > 0 ? perRequest(zeroRedis(), tally.redis, n) : undefined,
        perRound: tally.perRound,
        ...(placements[i] ? { placement: placements[i] } : {}),
      });
    }
  } finally {
    for (const r of running) await r.stop();
  }
  await stop(upstream.child);
  await redisInfo?.close();
  // The duration as measured: rounds × a slice of whole seconds.
  report(figures, { ...opts, duration: rounds * Math.max(1, Math.round(opts.duration / rounds)) }, { workers: setup.workers, store: storeKind(setup), storeLabel: storeLabel(setup), rounds, load: wrk ? 'wrk' : 'autocannon', keys: setup.keys });
}

const round3 = (n: number) => Number(n.toFixed(3));

main().then(
  // Exit explicitly: fetch's pooled sockets would otherwise hold the process open for a few seconds.
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
