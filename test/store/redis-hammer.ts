// Load for the two-process test: workers on two RedisStores admit and settle one key while a probe samples the leases.
import type { Cluster, Redis } from 'ioredis';
import type { RedisStore } from '../../core/store/redis/store.ts';
import type { UsageRecord, UsageTotals } from '../../core/store/types.ts';
import { T0, record } from './fixtures.ts';

export interface HammerResult {
  admitted: number;
  maxHeld: number;
  maxLeases: number;
  samples: number;
  settled: UsageRecord[];
  /** Records recorded exactly once although both stores settled each (counts the `recorded: true` answers). */
  doubleRecorded: number;
  expected: UsageTotals;
}

const pause = () => new Promise((r) => setTimeout(r, Math.random() * 3));

export async function hammer(
  connect: () => Redis | Cluster, a: RedisStore, b: RedisStore, o: { concurrency: number; rpm: number; workers: number; attempts: number },
): Promise<HammerResult> {
  const limits = { concurrency: o.concurrency, rpm: o.rpm };
  let held = 0;
  let maxHeld = 0;
  let admitted = 0;
  let recordedTrue = 0;
  const settled: UsageRecord[] = [];

  async function settleTwice(r: UsageRecord, admission: Parameters<RedisStore['settle']>[1]): Promise<void> {
    // Both processes settle the same record at once (a retried settlement): it must count once.
    const [x, y] = await Promise.all([a.settle(r, admission, limits), b.settle(r, admission, limits)]);
    recordedTrue += Number(x.recorded) + Number(y.recorded);
    settled.push(r);
  }

  async function worker(store: RedisStore, w: number): Promise<void> {
    for (let i = 0; i < o.attempts; i++) {
      const requestId = `h-${w}-${i}`;
      // All within one second: the rpm window never slides during the test, leases never expire.
      const now = T0 + ((w * o.attempts + i) % 1000);
      const res = await store.admit({ keyId: 'hammer', requestId, now, limits, estimatedTokens: 50, leaseMs: 60_000 });
      if (!res.ok) {
        await settleTwice(record({ request_id: requestId, key_id: 'hammer', time: now, status: 429, ending: 'rejected' }), undefined);
        continue;
      }
      admitted++;
      maxHeld = Math.max(maxHeld, ++held);
      await pause();
      held--;
      await settleTwice(record({
        request_id: requestId, key_id: 'hammer', time: now, input_tokens: 10 + i, output_tokens: w + 1,
        cache_read_tokens: i % 3, reasoning_tokens: 1, cost: 0.000001 * (w + 1) + 0.00000003 * i,
      }), res.admission);
    }
  }

  const probe = connect();
  const leaseKey = a.layout.key('hammer').lease;
  let maxLeases = 0;
  let samples = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      maxLeases = Math.max(maxLeases, await probe.zcard(leaseKey));
      samples++;
    }
  })();
  await Promise.all(Array.from({ length: o.workers }, (_, w) => worker(w % 2 ? b : a, w)));
  running = false;
  await sampling;
  await probe.quit();

  const sum = (f: keyof UsageRecord) => settled.reduce((n, r) => n + (r[f] as number), 0);
  return {
    admitted, maxHeld, maxLeases, samples, settled, doubleRecorded: recordedTrue,
    expected: {
      requests: settled.length, input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens'),
      cache_read_tokens: sum('cache_read_tokens'), cache_write_tokens: sum('cache_write_tokens'),
      reasoning_tokens: sum('reasoning_tokens'), cost: settled.reduce((n, r) => n + Math.round(r.cost * 1e9), 0) / 1e9,
    },
  };
}
