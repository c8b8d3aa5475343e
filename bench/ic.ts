// `node bench/ic.ts`: the gateway under the bench's load with V8's inline-cache log on (--log-ic), and the property
// loads and stores still missing their caches once it is warm. A place that reads objects of many shapes (maps) goes
// megamorphic: each read is then a lookup in a shared table, or a call into the runtime for a shape it has not seen,
// where a warm monomorphic read is a compare and a load. The CPU profile spreads that cost over every reader; this log
// names the properties. It found the streams' contexts made into prototypes (core/context.ts scratchCtx).
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { stop } from './children.ts';
import { check, fire } from './load.ts';
import { helpAndExit, number, redisFor, withUsage } from './options.ts';
import { setUpGateways, startUpstream, targets } from './targets.ts';

const usage = `usage: node bench/ic.ts [--target c|d] [--stream] [--connections N] [--warmup S] [--seconds S] [--store file|redis]
  Runs the gateway target (c: the full chain, d: translating) with --log-ic, warms it up (--warmup, default 10 s,
  not counted), then loads it --seconds (default 5) more: the inline caches that changed state in that window, by
  property and change (0 uninitialized, 1 monomorphic, P polymorphic, N megamorphic, X generic), most first, and the
  count a thousand requests. A gateway warm and steady changes few: what goes on changing is a place that keeps
  meeting new shapes.`;

function parse() {
  const { values } = parseArgs({
    options: {
      target: { type: 'string', default: 'c' }, stream: { type: 'boolean', default: false },
      connections: { type: 'string', default: '50' }, warmup: { type: 'string', default: '10' },
      seconds: { type: 'string', default: '5' }, store: { type: 'string', default: 'file' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) helpAndExit(usage);
  if (values.target !== 'c' && values.target !== 'd') throw new Error(`--target: c or d, got "${values.target}"`);
  if (values.stream && values.target === 'd') throw new Error('--stream: the translating target (d) takes whole answers only');
  return {
    target: values.target, stream: values.stream, redis: redisFor(values.store),
    connections: Math.round(number(values.connections, 'connections', 1, 2000)),
    warmup: number(values.warmup, 'warmup', 1, 120), seconds: number(values.seconds, 'seconds', 1, 60),
  };
}

const o = withUsage(usage, parse);
const logfile = join(tmpdir(), `gateway-ic-${process.pid}.log`);
setUpGateways({ redis: o.redis, workers: 1, nodeFlags: ['--log-ic', `--logfile=${logfile}`, '--no-logfile-per-isolate'] });
const upstream = await startUpstream();
const target = targets.find((t) => t.id === o.target)!;
// The log's times count from the gateway's start (within the few ms of its spawn and re-exec: app/start.js).
const started = performance.now();
const running = await target.start(upstream.child, upstream.url);
let answered = 0;
let from = 0, to = 0;
try {
  const answer = await check(running.url, o.stream, running.key);
  await fire(running.url, { connections: o.connections, duration: o.warmup, stream: o.stream }, { key: running.key, check: answer }, () => {}).run;
  from = performance.now() - started;
  await fire(running.url, { connections: o.connections, duration: o.seconds, stream: o.stream }, { key: running.key, check: answer }, () => { answered++; }).run;
  to = performance.now() - started;
} finally {
  await running.stop();
  await stop(upstream.child);
}
await sleep(100);
// IC lines: type, pc, time (µs), line, column, old state, new state, map, key, modifier, slow reason.
const changes = new Map<string, number>();
let total = 0;
for (const line of readFileSync(logfile, 'latin1').split('\n')) {
  if (!/^(Keyed)?(Load|Store)(Global)?IC,/.test(line)) continue;
  const f = line.split(',');
  const ms = Number(f[2]) / 1000;
  if (ms < from || ms > to) continue;
  total++;
  const k = `${f[0]} ${f[5]}->${f[6]} ${f[8]}`;
  changes.set(k, (changes.get(k) ?? 0) + 1);
}
rmSync(logfile, { force: true });
process.stdout.write(`target ${target.id} (${target.label}), ${o.stream ? 'streams' : 'whole answers'}, ${o.redis ? 'Redis' : 'embedded store'}: ${answered} answers in ${o.seconds} s after ${o.warmup} s of warm-up\n`);
process.stdout.write(`inline-cache changes: ${total} (${answered ? ((1000 * total) / answered).toFixed(1) : '-'} a thousand requests)\n`);
for (const [k, n] of [...changes].sort((a, b) => b[1] - a[1]).slice(0, 20)) process.stdout.write(`${String(n).padStart(7)}  ${k}\n`);
process.exit(0);
