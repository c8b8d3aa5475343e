// `npm run bench`: direct upstream vs bare http-proxy-3 vs the gateway, same load, one run, so ratios are comparable.
import { parseArgs } from 'node:util';
import { stop } from './children.ts';
import { helpAndExit, number, redisFor, withUsage } from './options.ts';
import { check, measure, type LoadOptions } from './load.ts';
import { report, type TargetFigures } from './report.ts';
import { setUpGateways, startUpstream, storeKind, storeLabel, targets, type GatewaySetup, type TargetId } from './targets.ts';
import { cpuDelta, threadDelta, treeCpu, treeThreadCpu } from './proc.ts';
import { perRequest, RedisInfo, type RedisSample } from './redis-info.ts';

const usage = `usage: node bench/run.ts [--connections N] [--duration S] [--warmup S] [--only a,b,c] [--stream] [--store file|redis] [--workers N]
  a = direct to the static upstream, b = bare http-proxy-3, c = the gateway (full chain),
  d = the gateway translating (chat client, Anthropic-format group; whole answers only)
  --store redis: the gateway targets keep their state in Redis (REDIS_URL, else 127.0.0.1:6379) instead of the
    embedded store (a SQLite file in a fresh temp folder); the report adds Redis's own calls and CPU per request
  --workers N (1 to 16): the gateway targets run as a cluster of N worker processes; CPU and peak RSS are summed over
    the primary and its workers. Without --store redis they cannot share the embedded store's file: each worker then
    keeps its state in memory (":memory:"), its own limits and usage; the report's header says which
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
  defaults: --connections 50 (at most 5000) --duration 10 --warmup 2 --only a,b,c,d --store file --workers 1`;

interface Parsed { opts: LoadOptions; only: Set<TargetId>; setup: GatewaySetup }

function parse(): Parsed {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      only: { type: 'string', default: 'a,b,c,d' },
      stream: { type: 'boolean', default: false },
      store: { type: 'string', default: 'file' },
      workers: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) helpAndExit(usage);
  const only = new Set(values.only.split(',').map((s) => s.trim()).filter(Boolean));
  for (const id of only) if (!targets.some((t) => t.id === id)) throw new Error(`--only: unknown target "${id}" (use a, b, c, d)`);
  if (only.size === 0) throw new Error('--only: name at least one target');
  return {
    opts: {
      connections: Math.round(number(values.connections, 'connections', 1, 5000)),
      duration: number(values.duration, 'duration', 1, 600),
      warmup: number(values.warmup, 'warmup', 0, 60),
      stream: values.stream,
    },
    only: only as Set<TargetId>,
    setup: { redis: redisFor(values.store), workers: Math.round(number(values.workers, 'workers', 1, 16)) },
  };
}

async function main(): Promise<void> {
  const { opts, only, setup } = withUsage(usage, parse);
  setUpGateways(setup);
  const redisInfo = setup.redis ? new RedisInfo(setup.redis) : undefined;
  const upstream = await startUpstream();
  const figures: TargetFigures[] = [];
  const chosen = targets.filter((t) => only.has(t.id) && !(opts.stream && t.id === 'd'));
  // The bare proxy and the gateway run from node's compile cache (targets.ts); each is started and stopped once
  // first, so that the cache holds them in every measured run, the first on a fresh machine included.
  for (const target of chosen.filter((t) => t.id !== 'a')) await (await target.start(upstream.child, upstream.url)).stop();
  // Sequential, so no target competes with another for the CPU.
  for (const target of chosen) {
    process.stderr.write(`bench: ${target.id} ${target.label}: ${opts.warmup} s warm-up + ${opts.duration} s at ${opts.connections} connections\n`);
    const running = await target.start(upstream.child, upstream.url);
    try {
      const answer = await check(running.url, opts.stream, running.key);
      // The server's CPU time and (for a gateway on Redis) Redis's own, over the measured window only.
      let cpu0: Map<number, number> | null = null;
      let cpu1: Map<number, number> | null = null;
      let threads0: ReturnType<typeof treeThreadCpu> = null;
      let threads1: ReturnType<typeof treeThreadCpu> = null;
      const onRedis = redisInfo && (target.id === 'c' || target.id === 'd');
      let before: RedisSample | undefined;
      let after: RedisSample | undefined;
      const load = await measure(running.url, opts, { key: running.key, check: answer }, {
        start: () => { cpu0 = treeCpu(running.pid); threads0 = treeThreadCpu(running.pid); if (onRedis) void redisInfo.sample().then((s) => { before = s; }); },
        end: () => { cpu1 = treeCpu(running.pid); threads1 = treeThreadCpu(running.pid); },
      });
      if (onRedis) after = await redisInfo.sample();
      const rss = await running.rss();
      // The ttfb probe's answers were served in the window too.
      const answered = load.ok + load.non2xx + (load.ttfb?.answered ?? 0);
      const cpuUsPerRequest = cpu0 !== null && cpu1 !== null && answered > 0 ? cpuDelta(cpu0, cpu1) / answered : null;
      const split = threads0 !== null && threads1 !== null && answered > 0 ? threadDelta(threads0, threads1) : null;
      const cpuByThread = split && { main: split.main / answered, v8: split.v8 / answered, other: split.other / answered };
      figures.push({
        id: target.id, label: target.label, ...load, rssBytes: rss.bytes, rssSource: rss.source, cpuUsPerRequest, cpuByThread,
        redis: before && after && answered > 0 ? perRequest(before, after, answered) : undefined,
      });
    } finally {
      await running.stop();
    }
  }
  await stop(upstream.child);
  await redisInfo?.close();
  report(figures, opts, { workers: setup.workers, store: storeKind(setup), storeLabel: storeLabel(setup) });
}

main().then(
  // Exit explicitly: fetch's pooled sockets would otherwise hold the process open for a few seconds.
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
