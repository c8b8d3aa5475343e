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
  /** The same split by thread (summed over the tree's processes): JavaScript, V8's helpers (GC, compiler), the rest. */
  cpuByThread: { main: number; v8: number; other: number } | null;
  redis?: RedisPerRequest;
  /** Each round's slice alone (with --rounds N): its req/s and CPU µs per request (and Redis's, for a gateway on Redis). */
  perRound?: { rps: number; cpuUsPerRequest: number | null; redisCpuUs?: number }[];
  /** On a Cluster: the master (index into redis.shardShares) serving each API key's slot, and the group's. */
  placement?: { keys: number[]; group: number };
}

type Ratio = { rps: number | null; p50: number | null; p99: number | null; cpu: number | null };

const round = (n: number, digits: number) => Number(n.toFixed(digits));
const mb = (bytes: number | null) => (bytes === null ? null : round(bytes / 2 ** 20, 1));
const div = (x: number, y: number | undefined) => (y ? round(x / y, 3) : null);

function ratio(c: TargetFigures, base: TargetFigures | undefined): Ratio | null {
  if (!base) return null;
  return {
    rps: div(c.rps, base.rps), p50: div(c.p50Ms, base.p50Ms), p99: div(c.p99Ms, base.p99Ms),
    cpu: c.cpuUsPerRequest !== null && base.cpuUsPerRequest ? round(c.cpuUsPerRequest / base.cpuUsPerRequest, 3) : null,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * c against base round by round: the targets take turns within a round, so a round's two slices ran seconds apart, and
 * a change of the machine's speed between rounds moves both. The spread of these ratios is how far one run's pooled
 * ratio can be trusted; null without rounds in both, or when a round lacks a figure.
 */
export function roundRatios(c: TargetFigures | undefined, base: TargetFigures | undefined): { rps: number[]; cpu: number[] | null; medianRps: number; medianCpu: number | null } | null {
  const cr = c?.perRound;
  const br = base?.perRound;
  if (!cr || !br || cr.length < 2 || cr.length !== br.length || br.some((r) => r.rps <= 0)) return null;
  const rps = cr.map((r, i) => round(r.rps / br[i].rps, 3));
  const cpuKnown = cr.every((r, i) => r.cpuUsPerRequest !== null && br[i].cpuUsPerRequest);
  const cpu = cpuKnown ? cr.map((r, i) => round(r.cpuUsPerRequest! / br[i].cpuUsPerRequest!, 3)) : null;
  return { rps, cpu, medianRps: round(median(rps), 3), medianCpu: cpu && round(median(cpu), 3) };
}

/**
 * Redis's CPU µs per request in each round's slice and their median, for a target on Redis measured in several rounds;
 * null otherwise. Redis serves the gateway alone in its slices, so their spread is the machine's, as for c/b's ratios.
 */
export function redisRounds(f: TargetFigures): { cpuUs: number[]; median: number } | null {
  const rounds = f.perRound;
  if (!f.redis || !rounds || rounds.length < 2 || rounds.some((r) => r.redisCpuUs === undefined)) return null;
  const cpuUs = rounds.map((r) => round(r.redisCpuUs!, 1));
  return { cpuUs, median: round(median(cpuUs), 1) };
}

/**
 * Redis's CPU per request as a share of the bare proxy's (b) CPU per request, over the run and round by round with the
 * median: a figure of Redis's work that follows the machine's speed less than µs do (both are CPU time on the same
 * machine in the same run). Null without b's CPU figure; the rounds null unless both have every round's figure.
 */
export function redisShare(f: TargetFigures, base: TargetFigures | undefined): { share: number; perRound: number[] | null; median: number | null } | null {
  if (!f.redis || !base?.cpuUsPerRequest) return null;
  const share = round(f.redis.cpuUs / base.cpuUsPerRequest, 3);
  const rounds = redisRounds(f);
  const br = base.perRound;
  const aligned = rounds && br && br.length === rounds.cpuUs.length && br.every((r) => r.cpuUsPerRequest);
  const perRound = aligned ? f.perRound!.map((r, i) => round(r.redisCpuUs! / br[i].cpuUsPerRequest!, 3)) : null;
  return { share, perRound, median: perRound && round(median(perRound), 3) };
}

/** A table row: the first cell left-aligned, the rest right-aligned, null as '-'. */
export function row(cells: (string | number | null)[], widths: number[]): string {
  return cells.map((cell, i) => {
    const text = cell === null ? '-' : String(cell);
    return i === 0 ? text.padEnd(widths[i]) : text.padStart(widths[i]);
  }).join('  ');
}

/** How the gateway targets ran: their worker processes and their store (`store` for the JSON line, `storeLabel` for people). */
export interface GatewayRun { workers: number; store: string; storeLabel: string; rounds?: number; load?: 'autocannon' | 'wrk'; keys?: number }

/** The issue's target for streams: time-to-first-byte overhead p99 at most this over the bare proxy. */
const TTFB_OVERHEAD_P99_MS = 5;

/** A table column: its title, its width and a target's cell. */
type Column = [string, number, (f: TargetFigures) => string | number | null];
const fixed = (x: number | null | undefined, digits: number) => (x == null ? null : x.toFixed(digits));
const rounded = (x: number | null | undefined, digits: number) => (x == null ? null : round(x, digits));

const columns: Column[] = [
  ['target', 26, (f) => `${f.id}  ${f.label}`],
  ['req/s', 10, (f) => f.rps.toFixed(1)],
  ['p50 ms', 9, (f) => f.p50Ms.toFixed(3)],
  ['p99 ms', 9, (f) => f.p99Ms.toFixed(3)],
  ['errors', 7, (f) => f.errors],
  ['non-2xx', 8, (f) => f.non2xx],
  ['short', 6, (f) => f.short],
  ['dropped', 8, (f) => f.dropped],
  ['peak RSS MB', 12, (f) => mb(f.rssBytes)],
  ['CPU µs/req', 11, (f) => fixed(f.cpuUsPerRequest, 1)],
];
const ttfbColumns: Column[] = [
  ['ttfb p50', 9, (f) => fixed(f.ttfb?.p50Ms, 2)],
  ['ttfb p99', 9, (f) => fixed(f.ttfb?.p99Ms, 2)],
];

/** Issue 39's targets for a gateway target against the bare proxy (b): CPU, req/s and, on Redis, its CPU and script calls. */
export const TARGETS = { cpuOfBare: 2.0, rpsOfBare: 0.45, redisCpuUs: 50, scriptCalls: 0.2 } as const;

/** Script calls a request: EVALSHA, EVAL and FCALL (INFO commandstats names them in lower case). */
export const scriptCalls = (byCommand: Record<string, number>): number =>
  Object.entries(byCommand).filter(([cmd]) => /^(evalsha|eval|fcall)(_ro)?$/.test(cmd)).reduce((sum, [, n]) => sum + n, 0);

/** One line: each of TARGETS for f, its figure and whether it is met; null without b's figures. */
export function targetsMet(f: TargetFigures, b: TargetFigures | undefined): string | null {
  const r = ratio(f, b);
  if (!r || r.cpu === null || r.rps === null) return null;
  const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const parts = [
    `CPU ${r.cpu.toFixed(3)}× b (≤ ${TARGETS.cpuOfBare}: ${mark(r.cpu <= TARGETS.cpuOfBare)})`,
    `req/s ${r.rps.toFixed(3)}× b (≥ ${TARGETS.rpsOfBare}: ${mark(r.rps >= TARGETS.rpsOfBare)})`,
  ];
  if (f.redis) {
    const calls = scriptCalls(f.redis.byCommand);
    parts.push(`Redis ${f.redis.cpuUs} µs (≤ ${TARGETS.redisCpuUs}: ${mark(f.redis.cpuUs <= TARGETS.redisCpuUs)})`);
    parts.push(`script calls ${calls.toFixed(3)} (≤ ${TARGETS.scriptCalls}: ${mark(calls <= TARGETS.scriptCalls)})`);
  }
  return `targets, ${f.id}: ${parts.join(', ')}`;
}

/** Where a target's key slots and group slot sit on a Cluster's masters: keys counted by master, the group's master. */
export function placed(f: Pick<TargetFigures, 'placement'>, masters: number): string {
  if (!f.placement) return '';
  const count = Array.from({ length: masters }, (_, m) => f.placement!.keys.filter((k) => k === m).length);
  return `; API keys by master ${count.join(' ')}, the group's on master ${f.placement.group + 1}`;
}

export function report(figures: TargetFigures[], opts: LoadOptions, gateway: GatewayRun): void {
  const by = new Map(figures.map((f) => [f.id, f]));
  const c = by.get('c');
  const d = by.get('d');
  const e = by.get('e');
  const b = by.get('b');
  const ratios = {
    'c/a': c ? ratio(c, by.get('a')) : null, 'c/b': c ? ratio(c, b) : null, 'd/c': d ? ratio(d, c) : null,
    'e/b': e ? ratio(e, b) : null,
  };
  const minus = (x: number | null | undefined, y: number | null | undefined) => (x != null && y != null ? round(x - y, 2) : null);
  const ttfbOverhead = minus(c?.ttfb?.p99Ms, b?.ttfb?.p99Ms);
  const contentOverhead = minus(c?.ttfb?.contentP99Ms, b?.ttfb?.contentP99Ms);

  const shown = opts.stream ? [...columns, ...ttfbColumns] : columns;
  const widths = shown.map(([, w]) => w);
  const out = [
    `${opts.stream ? 'streams of ~1 s (20 chunks 50 ms apart), ' : ''}connections ${opts.connections}, ${opts.duration} s measured after ${opts.warmup} s warm-up${(gateway.rounds ?? 1) > 1 ? ` (in ${gateway.rounds} rounds, the targets taking turns)` : ''}, node ${process.version}, ${os.availableParallelism()} cpus, load from ${gateway.load ?? 'autocannon'}`,
    `gateway targets: ${gateway.workers === 1 ? 'one process' : `${gateway.workers} workers (CPU and peak RSS summed over primary and workers)`}, store ${gateway.storeLabel}`,
    `API keys: ${(gateway.keys ?? 1) === 1 ? 'one' : `${gateway.keys} of one group in c and e, the load cycling through them request by request`}`,
    '',
    row(shown.map(([title]) => title), widths),
    ...figures.map((f) => row(shown.map(([, , cell]) => cell(f)), widths)),
    ...figures.filter((f) => f.ttfb).map((f) => `   ${f.id} ttfb: ${f.ttfb!.n} probes timed, ${f.ttfb!.failed} failed; to the first content p50 ${fixed(f.ttfb!.contentP50Ms, 2) ?? '-'} ms, p99 ${fixed(f.ttfb!.contentP99Ms, 2) ?? '-'} ms`),
    ...figures.filter((f) => f.rssSource !== 'VmHWM').map((f) => `   ${f.id} peak RSS: ${f.rssSource}`),
    ...figures.filter((f) => f.cpuByThread).map((f) => `   ${f.id} CPU by thread: JavaScript ${fixed(f.cpuByThread!.main, 1)}, V8 helpers (GC, compiler) ${fixed(f.cpuByThread!.v8, 1)}, other threads ${fixed(f.cpuByThread!.other, 1)} µs/req`),
    ...figures.filter((f) => f.redis).map((f) => {
      const rounds = redisRounds(f);
      const by = rounds ? ` (round by round ${rounds.cpuUs.map((x) => x.toFixed(1)).join(' ')}, median ${rounds.median.toFixed(1)})` : '';
      const share = redisShare(f, b);
      const ofBare = share ? `; ${share.share.toFixed(3)} of b's CPU a request${share.perRound ? ` (round by round ${share.perRound.map((x) => x.toFixed(3)).join(' ')}, median ${share.median!.toFixed(3)})` : ''}` : '';
      const shares = f.redis!.shardShares;
      const shard = f.redis!.busiestShare !== undefined ? ` (busiest of ${f.redis!.shards} shards: ${Math.round(f.redis!.busiestShare * 100)} %; by master ${shares!.map((x) => `${(x * 100).toFixed(1)}`).join(' ')} %${placed(f, shares!.length)})` : '';
      return `   ${f.id} on Redis: ${f.redis!.calls} calls/req ${JSON.stringify(f.redis!.byCommand)}, Redis CPU ${f.redis!.cpuUs} µs/req${shard}${by}${ofBare}`;
    }),
    '',
    row(['ratio', 'req/s', 'p50', 'p99', 'CPU µs/req'], [...widths.slice(0, 4), 11]),
  ];
  for (const [name, r] of Object.entries(ratios)) {
    out.push(row([name, fixed(r?.rps, 3), fixed(r?.p50, 3), fixed(r?.p99, 3), fixed(r?.cpu, 3)], [...widths.slice(0, 4), 11]));
  }
  const perRound = roundRatios(c, b);
  const ePerRound = roundRatios(e, b);
  const list = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(' ');
  for (const [name, r] of [['c/b', perRound], ['e/b', ePerRound]] as const) {
    if (r) out.push(`${name} round by round: req/s ${list(r.rps)} (median ${r.medianRps.toFixed(3)})${r.cpu ? `; CPU µs/req ${list(r.cpu)} (median ${r.medianCpu!.toFixed(3)})` : ''}`);
  }
  const goals = [c, e].filter((f) => f !== undefined).map((f) => targetsMet(f, b)).filter((line) => line !== null);
  if (goals.length) out.push('', ...goals);
  if (opts.stream) {
    const against = (ms: number | null) => (ms === null ? '- (needs targets b and c, each with timed probes)'
      : `${ms.toFixed(2)} ms (target ≤ ${TTFB_OVERHEAD_P99_MS} ms: ${ms <= TTFB_OVERHEAD_P99_MS ? 'met' : 'not met'})`);
    out.push(`ttfb p99 c − b: ${against(ttfbOverhead)}`);
    out.push(`first content p99 c − b: ${against(contentOverhead)}`);
    out.push('   the gateway holds a stream\'s opening frames until its first content, which the upstream sends 50 ms after them: c\'s ttfb carries those 50 ms');
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
    rounds: gateway.rounds ?? 1,
    stream: opts.stream,
    workers: gateway.workers,
    store: gateway.store,
    load: gateway.load ?? 'autocannon',
    keys: gateway.keys ?? 1,
    targets: Object.fromEntries(figures.map((f) => [f.id, {
      label: f.label,
      rps: round(f.rps, 1),
      p50_ms: round(f.p50Ms, 3),
      p99_ms: round(f.p99Ms, 3),
      ok: f.ok,
      errors: f.errors,
      non2xx: f.non2xx,
      short: f.short,
      dropped: f.dropped,
      measured_s: f.durationS,
      peak_rss_mb: mb(f.rssBytes),
      rss_source: f.rssSource,
      cpu_us_per_req: rounded(f.cpuUsPerRequest, 1),
      cpu_by_thread_us_per_req: f.cpuByThread && { main: round(f.cpuByThread.main, 1), v8: round(f.cpuByThread.v8, 1), other: round(f.cpuByThread.other, 1) },
      ...(f.ttfb ? {
        ttfb: {
          p50_ms: rounded(f.ttfb.p50Ms, 3), p99_ms: rounded(f.ttfb.p99Ms, 3),
          first_content_p50_ms: rounded(f.ttfb.contentP50Ms, 3), first_content_p99_ms: rounded(f.ttfb.contentP99Ms, 3),
          n: f.ttfb.n, failed: f.ttfb.failed,
        },
      } : {}),
      ...(f.redis ? { redis: { ...f.redis, cpuUsPerRound: redisRounds(f)?.cpuUs, shareOfBareCpu: redisShare(f, b) } } : {}),
      ...(f.placement ? { placement: { key_masters: f.placement.keys, group_master: f.placement.group } } : {}),
    }])),
    ratios,
    ...(perRound ? { c_b_per_round: perRound } : {}),
    ...(ePerRound ? { e_b_per_round: ePerRound } : {}),
    ...(opts.stream ? { ttfb_p99_c_minus_b_ms: ttfbOverhead, first_content_p99_c_minus_b_ms: contentOverhead } : {}),
  };
  process.stdout.write(JSON.stringify(json) + '\n');
}
