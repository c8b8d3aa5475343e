// Load for the two-process account test: workers on two RedisStores take and give back slots of one account
// (retrying while it is busy) while a probe samples the account's lease set.
import type { Cluster, Redis } from 'ioredis';
import type { RedisStore } from '../../core/store/redis/store.ts';
import { T0 } from './fixtures.ts';

export interface AccountHammerResult {
  acquired: number;
  released: number;
  busy: number;
  maxHeld: number;
  maxLeases: number;
  samples: number;
  leftover: number;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, Math.random() * ms));

export async function accountHammer(
  connect: () => Redis | Cluster, a: RedisStore, b: RedisStore, o: { concurrency: number; workers: number; attempts: number },
): Promise<AccountHammerResult> {
  const candidates = [{ id: 'solo', priority: 1, weight: 1, concurrency: o.concurrency }];
  let held = 0;
  let maxHeld = 0;
  let acquired = 0;
  let released = 0;
  let busy = 0;

  async function worker(store: RedisStore, w: number): Promise<void> {
    for (let i = 0; i < o.attempts; i++) {
      // One fixed `now` with long leases: nothing expires during the test, so only releases free slots.
      const req = { group: 'hammer', requestId: `ah-${w}-${i}`, now: T0, candidates, leaseMs: 600_000 };
      for (;;) {
        const r = await store.acquireAccount(req);
        if (r.ok) {
          acquired++;
          maxHeld = Math.max(maxHeld, ++held);
          await pause(3);
          held--;
          await store.releaseAccount(r.lease);
          released++;
          break;
        }
        if (r.reason !== 'busy') throw new Error(`unexpected refusal ${r.reason}`);
        busy++;
        await pause(2);
      }
    }
  }

  const probe = connect();
  const leaseKey = a.layout.group('hammer').lease('solo');
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
  const leftover = await probe.zcard(leaseKey);
  await probe.quit();
  return { acquired, released, busy, maxHeld, maxLeases, samples, leftover };
}
