// Redis's own cost of a benchmark window: INFO commandstats (calls by command) and INFO cpu (used_cpu_sys + user),
// sampled before and after, divided by the requests answered in it.
import { Redis } from 'ioredis';

export interface RedisSample { calls: Map<string, number>; cpuS: number }
export interface RedisPerRequest { calls: number; byCommand: Record<string, number>; cpuUs: number }

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
  return { calls: Number((calls / requests).toFixed(2)), byCommand, cpuUs: Number((((after.cpuS - before.cpuS) * 1e6) / requests).toFixed(1)) };
}

export class RedisInfo {
  readonly #client: Redis;
  constructor(url: string) { this.#client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 }); }
  async sample(): Promise<RedisSample> {
    const [stats, cpu] = await Promise.all([this.#client.info('commandstats'), this.#client.info('cpu')]);
    return parseInfo(stats, cpu);
  }
  async close(): Promise<void> { await this.#client.quit().catch(() => this.#client.disconnect()); }
}
