// Redis's own cost of a benchmark window: INFO commandstats (calls by command) and INFO cpu (used_cpu_sys + user),
// sampled before and after, divided by the requests answered in it; on a Cluster summed over its masters.
import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { clusterNodes } from '../scripts/redis-cluster.ts';

/** `shardCpuS`: on a Cluster, each master's CPU seconds (their sum is `cpuS`). */
export interface RedisSample { calls: Map<string, number>; cpuS: number; shardCpuS?: number[] }
/** `busiestShare`: on a Cluster, the busiest master's share of the masters' CPU. */
export interface RedisPerRequest {
  calls: number; byCommand: Record<string, number>; cpuUs: number; shards?: number; busiestShare?: number; shardShares?: number[];
}

/** Parses INFO commandstats and INFO cpu text. */
export function parseInfo(commandstats: string, cpu: string): RedisSample {
  const calls = new Map<string, number>();
  for (const m of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1], Number(m[2]));
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
  return { calls, cpuS: field('used_cpu_sys') + field('used_cpu_user') };
}

/** What the window cost Redis per request: calls (all, and by command with at least 0.05 per request) and CPU µs. */
export function perRequest(before: RedisSample, after: RedisSample, requests: number): RedisPerRequest {
  const byCommand: Record<string, number> = {};
  let calls = 0;
  for (const [cmd, n] of after.calls) {
    if (cmd === 'info') continue;
    const d = n - (before.calls.get(cmd) ?? 0);
    calls += d;
    if (d / requests >= 0.05) byCommand[cmd] = Number((d / requests).toFixed(2));
  }
  const out: RedisPerRequest = { calls: Number((calls / requests).toFixed(2)), byCommand, cpuUs: Number((((after.cpuS - before.cpuS) * 1e6) / requests).toFixed(1)) };
  const shards = after.shardCpuS?.map((s, i) => s - (before.shardCpuS?.[i] ?? 0));
  const total = shards?.reduce((a, b) => a + b, 0) ?? 0;
  if (shards && shards.length > 1 && total > 0) {
    out.shards = shards.length;
    out.shardShares = shards.map((s) => Number((s / total).toFixed(3)));
    out.busiestShare = Math.max(...out.shardShares);
  }
  return out;
}

/** Samples of several servers as one: calls and CPU summed, each server's CPU kept. */
export function sumSamples(samples: RedisSample[]): RedisSample {
  if (samples.length === 1) return samples[0];
  const calls = new Map<string, number>();
  for (const s of samples) for (const [cmd, n] of s.calls) calls.set(cmd, (calls.get(cmd) ?? 0) + n);
  return { calls, cpuS: samples.reduce((a, s) => a + s.cpuS, 0), shardCpuS: samples.map((s) => s.cpuS) };
}

/** INFO of one Redis, or of each master of a redis+cluster:// URL's nodes (every node a master: scripts/redis-cluster.ts). */
export class RedisInfo {
  readonly #clients: Redis[];
  constructor(url: string) {
    const options = { lazyConnect: false, maxRetriesPerRequest: 1 };
    this.#clients = /^rediss?\+cluster:/.test(url) ? clusterNodes(url).map((n) => new Redis({ ...n, ...options })) : [new Redis(url, options)];
  }
  async sample(): Promise<RedisSample> {
    return sumSamples(await Promise.all(this.#clients.map(async (c) => {
      const [stats, cpu] = await Promise.all([c.info('commandstats'), c.info('cpu')]);
      return parseInfo(stats, cpu);
    })));
  }
  /** On a Cluster, the master (its index in the samples' shardCpuS) serving each hash tag's slot; null on one Redis. */
  async masters(tags: readonly string[]): Promise<number[] | null> {
    if (this.#clients.length < 2) return null;
    const ranges = await this.#clients[0].cluster('SLOTS');
    const ports = this.#clients.map((c) => c.options.port);
    return tags.map((tag) => {
      const slot = calculateSlot(`{${tag}}`);
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      return range?.[2] ? ports.indexOf(range[2][1]) : -1;
    });
  }
  async close(): Promise<void> { await Promise.all(this.#clients.map((c) => c.quit().catch(() => c.disconnect()))); }
}
