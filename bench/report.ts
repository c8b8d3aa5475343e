// Prints the benchmark's figures: a plain table for people, then one JSON line for notes to quote.
import os from 'node:os';
import type { LoadFigures, LoadOptions } from './load.ts';
import type { TargetId } from './targets.ts';
import type { RedisPerRequest } from './redis-info.ts';

export interface TargetFigures extends LoadFigures {
  id: TargetId;
  label: string;
  rssBytes: number | null;
  rssSource: string;
  /** The serving processes' CPU time (user + system, the server and its workers) over the measured window ÷ requests answered. */
  cpuUsPerRequest: number | null;
  redis?: RedisPerRequest;
}

type Ratio = { rps: number | null; p50: number | null; p99: number | null };

const round = (n: number, digits: number) => Number(n.toFixed(digits));
const mb = (bytes: number | null) => (bytes === null ? null : round(bytes / 2 ** 20, 1));
const div = (x: number, y: number | undefined) => (y ? round(x / y, 3) : null);

function ratio(c: TargetFigures, base: TargetFigures | undefined): Ratio | null {
  if (!base) return null;
  return { rps: div(c.rps, base.rps), p50: div(c.p50Ms, base.p50Ms), p99: div(c.p99Ms, base.p99Ms) };
}

function row(cells: (string | number | null)[], widths: number[]): string {
  return cells.map((cell, i) => {
    const text = cell === null ? '-' : String(cell);
    return i === 0 ? text.padEnd(widths[i]) : text.padStart(widths[i]);
  }).join('  ');
}

/** How the gateway targets ran: their worker processes and their store (`store` for the JSON line, `storeLabel` for people). */
export interface GatewayRun { workers: number; store: string; storeLabel: string }

export function report(figures: TargetFigures[], opts: LoadOptions, gateway: GatewayRun): void {
  const by = new Map(figures.map((f) => [f.id, f]));
  const c = by.get('c');
  const d = by.get('d');
  const ratios = { 'c/a': c ? ratio(c, by.get('a')) : null, 'c/b': c ? ratio(c, by.get('b')) : null, 'd/c': d ? ratio(d, c) : null };

  const widths = [26, 10, 9, 9, 7, 8, 12, 11];
  const out = [
    `${opts.stream ? 'streams of ~1 s (20 chunks 50 ms apart), ' : ''}connections ${opts.connections}, ${opts.duration} s measured after ${opts.warmup} s warm-up, node ${process.version}, ${os.availableParallelism()} cpus`,
    `gateway targets: ${gateway.workers === 1 ? 'one process' : `${gateway.workers} workers (CPU and peak RSS summed over primary and workers)`}, store ${gateway.storeLabel}`,
    '',
    row(['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'peak RSS MB', 'CPU µs/req'], widths),
    ...figures.map((f) => row([`${f.id}  ${f.label}`, f.rps.toFixed(1), f.p50Ms.toFixed(3), f.p99Ms.toFixed(3), f.errors, f.non2xx, mb(f.rssBytes),
      f.cpuUsPerRequest === null ? null : f.cpuUsPerRequest.toFixed(1)], widths)),
    ...figures.filter((f) => f.rssSource !== 'VmHWM').map((f) => `   ${f.id} peak RSS: ${f.rssSource}`),
    ...figures.filter((f) => f.redis).map((f) => `   ${f.id} on Redis: ${f.redis!.calls} calls/req ${JSON.stringify(f.redis!.byCommand)}, Redis CPU ${f.redis!.cpuUs} µs/req`),
    '',
    row(['ratio', 'req/s', 'p50', 'p99'], widths.slice(0, 4)),
  ];
  for (const [name, r] of Object.entries(ratios)) {
    const show = (x: number | null | undefined) => (x == null ? null : x.toFixed(3));
    out.push(row([name, show(r?.rps), show(r?.p50), show(r?.p99)], widths.slice(0, 4)));
  }
  process.stdout.write(out.join('\n') + '\n\n');

  const json = {
    bench: 'gateway-relay',
    at: new Date().toISOString(),
    node: process.version,
    cpus: os.availableParallelism(),
    connections: opts.connections,
    duration_s: opts.duration,
    warmup_s: opts.warmup,
    stream: opts.stream,
    workers: gateway.workers,
    store: gateway.store,
    targets: Object.fromEntries(figures.map((f) => [f.id, {
      label: f.label,
      rps: round(f.rps, 1),
      p50_ms: round(f.p50Ms, 3),
      p99_ms: round(f.p99Ms, 3),
      ok: f.ok,
      errors: f.errors,
      non2xx: f.non2xx,
      measured_s: f.durationS,
      peak_rss_mb: mb(f.rssBytes),
      rss_source: f.rssSource,
      cpu_us_per_req: f.cpuUsPerRequest === null ? null : round(f.cpuUsPerRequest, 1),
      ...(f.redis ? { redis: f.redis } : {}),
    }])),
    ratios,
  };
  process.stdout.write(JSON.stringify(json) + '\n');
}
