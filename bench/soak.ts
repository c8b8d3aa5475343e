// `npm run bench:soak`: the gateway (target c) at a fixed rate for minutes, its RSS, V8 heap and CPU sampled every
// 2 s, so a leak shows as growth from the first minute to the last.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, stop } from './children.ts';
import { LiveHeap } from './live-heap.ts';
import { check, fire } from './load.ts';
import { helpAndExit, number, redisFor, withUsage } from './options.ts';
import { row } from './report.ts';
import { treeCpu, treeMemory } from './proc.ts';
import { missing, minuteRow, SAMPLE_EVERY_S, verdict, type Counts, type MinuteRow, type Sample } from './soak-figures.ts';
import { metricValue, setUpGateways, startUpstream, storeKind, storeLabel, targets } from './targets.ts';

const usage = `usage: node bench/soak.ts [--minutes M] [--rate R] [--connections N] [--store file|redis]
  The gateway (full chain, one process) in front of the static upstream, whole answers at R requests a second
  (autocannon's overallRate: each connection sends its share of a second's requests, then waits for the next second)
  for M minutes. Every ${SAMPLE_EVERY_S} s: its RSS (VmRSS from /proc), V8 heap used (nodejs_heap_size_used_bytes from its
  /metrics) and CPU time; at each minute's end its live heap, after a full collection (through its inspector, which
  --inspect-port names and which opens only then). One row a minute (requests answered, errors, non-2xx, short = 2xx
  answers not whole, mean RSS and heap of the minute's samples, live heap, CPU µs per request), then the first minute
  against the last: the issue's target is RSS (mean) and heap (live: the samples' heap is a sawtooth between
  collections) flat, within 10 %. The first minute includes the process's warming up. Missing samples are named.
  --store redis: the gateway keeps its state in Redis (REDIS_URL, else 127.0.0.1:6379) instead of the embedded store
  defaults: --minutes 10 (1 to 60) --rate 1000 --connections 20 --store file`;

interface Parsed { minutes: number; rate: number; connections: number; redis?: string }

function parse(): Parsed {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '10' },
      rate: { type: 'string', default: '1000' },
      connections: { type: 'string', default: '20' },
      store: { type: 'string', default: 'file' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) helpAndExit(usage);
  return {
    minutes: Math.round(number(values.minutes, 'minutes', 1, 60)),
    rate: Math.round(number(values.rate, 'rate', 1, 100_000)),
    connections: Math.round(number(values.connections, 'connections', 1, 5000)),
    redis: redisFor(values.store),
  };
}

const HEAP_METRIC = 'nodejs_heap_size_used_bytes';

const widths = [7, 10, 7, 8, 6, 8, 8, 13, 11];
const cells = (r: MinuteRow) => [r.minute, r.requests, r.errors, r.non2xx, r.short, r.rssMb, r.heapMb, r.liveHeapMb, r.cpuUsPerRequest];

async function main(): Promise<void> {
  const { minutes, rate, connections, redis } = withUsage(usage, parse);
  const inspectPort = await freePort();
  const setup = { redis, workers: 1, nodeFlags: [`--inspect-port=127.0.0.1:${inspectPort}`] };
  setUpGateways(setup);
  const upstream = await startUpstream();
  const target = targets.find((t) => t.id === 'c')!;
  const running = await target.start(upstream.child, upstream.url);
  try {
    const answer = await check(running.url, false, running.key);
    process.stderr.write(`soak: ${target.label} at ${rate} req/s over ${connections} connections for ${minutes} min\n`);
    const counts: Counts[] = Array.from({ length: minutes }, () => ({ requests: 0, errors: 0, non2xx: 0, short: 0 }));
    const t0 = performance.now();
    const now = () => counts[Math.min(minutes - 1, Math.floor((performance.now() - t0) / 60_000))];
    const sample = async (i: number): Promise<Sample> => ({
      i, rssBytes: treeMemory(running.pid, 'VmRSS').bytes, cpu: treeCpu(running.pid), heapBytes: await metricValue(running.url, HEAP_METRIC),
    });
    const samples = [await sample(0)];
    // The live heap at each minute's end: the inspector is opened at the first (not before, so the minute runs as
    // shipped); a failure leaves that minute without the figure (named under the table) and is tried again next minute.
    let inspector: LiveHeap | undefined;
    const liveHeap = async (): Promise<number | null> => {
      try {
        inspector ??= await LiveHeap.open(running.pid!, inspectPort);
        return await inspector.bytes();
      } catch {
        return null;
      }
    };
    const { run, dropped } = fire(running.url, { connections, duration: minutes * 60, stream: false, overallRate: rate }, { key: running.key, check: answer },
      (status, whole) => { if (status >= 200 && status < 300 && !whole) now().short++; });
    run.on('response', (_client, status) => {
      const c = now();
      c.requests++;
      if (status < 200 || status >= 300) c.non2xx++;
    });
    run.on('reqError', () => { now().errors++; });
    // Samples at fixed times from the start, however long a reading takes.
    const perMinute = 60 / SAMPLE_EVERY_S;
    for (let i = 1; i <= minutes * perMinute; i++) {
      await sleep(Math.max(0, t0 + i * SAMPLE_EVERY_S * 1000 - performance.now()));
      samples.push(await sample(i));
      if (i % perMinute === 0) {
        samples[samples.length - 1].liveHeapBytes = await liveHeap();
        const r = minuteRow(i / perMinute - 1, samples, counts[i / perMinute - 1]);
        process.stderr.write(`soak: minute ${r.minute} of ${minutes}: ${r.requests} requests, ${r.errors} errors, RSS ${r.rssMb ?? '-'} MB, heap ${r.heapMb ?? '-'} MB (live ${r.liveHeapMb ?? '-'})\n`);
      }
    }
    await run;
    inspector?.close();
    const rows = counts.map((c, m) => minuteRow(m, samples, c));
    const gaps = missing(rows, samples);
    const v = verdict(rows);
    const lost = dropped();
    process.stdout.write([
      `soak: ${target.label} at ${rate} req/s (whole answers) over ${connections} connections for ${minutes} min, store ${storeLabel(setup)}, node ${process.version}, ${os.availableParallelism()} cpus; samples every ${SAMPLE_EVERY_S} s`,
      '',
      row(['minute', 'requests', 'errors', 'non-2xx', 'short', 'RSS MB', 'heap MB', 'live heap MB', 'CPU µs/req'], widths),
      ...rows.map((r) => row(cells(r), widths)),
      '',
      `first vs last minute: ${v.text}`,
      gaps.length ? `samples missing: ${gaps.join('; ')}` : `samples: all ${samples.length} taken (RSS, heap and CPU)`,
      `dropped (no answer, no error): at least ${lost}`,
      '',
    ].join('\n') + '\n');
    process.stdout.write(JSON.stringify({
      bench: 'gateway-soak', at: new Date().toISOString(), node: process.version, cpus: os.availableParallelism(),
      minutes, rate, connections, store: storeKind(setup), sample_every_s: SAMPLE_EVERY_S,
      minutes_rows: rows.map((r) => ({
        minute: r.minute, requests: r.requests, errors: r.errors, non2xx: r.non2xx, short: r.short,
        rss_mb: r.rssMb, heap_mb: r.heapMb, live_heap_mb: r.liveHeapMb, cpu_us_per_req: r.cpuUsPerRequest, rss_samples: r.rssSamples, heap_samples: r.heapSamples,
      })),
      rss_change_pct: v.rssChangePct, heap_change_pct: v.heapChangePct, flat: v.flat, verdict: v.text, samples_missing: gaps, dropped: lost,
    }) + '\n');
  } finally {
    await running.stop();
    await stop(upstream.child);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
