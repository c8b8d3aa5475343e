// The limit rules in their two runtimes: the memory store (rules/limits.ts) and Redis (lua/admit*.lua, settle*.lua,
// release.lua, heartbeat.lua), driven by the same random sequences of admissions, settlements (repeats too), releases,
// heartbeats and passing time, give the same answers. Calls of one step go together, so Redis runs its list forms too.
import t from 'tap';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { RedisStore } from '../../core/store/redis/store.ts';
import type { Admission, AdmitResult, KeyLimits, Store } from '../../core/store/types.ts';
import { record } from './fixtures.ts';
import { redisForTest } from './redis-server.ts';
import { seeded } from '../helpers/random.ts';

/** What an admission answers, as both stores must give it. */
const answer = (r: AdmitResult) => (r.ok
  ? { ok: true, lease: r.admission.lease, minute: r.admission.minute, tokens: r.admission.estimatedTokens, cost: r.admission.estimatedCost }
  : r);

t.test('random sequences: the memory store and Redis admit, refuse and settle alike', async (t) => {
  const { url, prefix } = await redisForTest(t, 'limits-parity');
  const redis = new RedisStore({ url, prefix });
  t.teardown(() => redis.close());
  const memory = new MemoryStore();
  const stores: Store[] = [memory, redis];
  let steps = 0;
  const reasons = new Map<string, number>();
  for (let round = 1; round <= 40; round++) {
    const rand = seeded(round);
    const int = (n: number) => Math.floor(rand() * n);
    const maybe = <X>(x: X): X | undefined => (rand() < 0.5 ? x : undefined);
    const keyId = `k${round}`;
    const limits: KeyLimits = {
      rpm: maybe(2 + int(12)), tpm: maybe(100 + int(800)), concurrency: maybe(1 + int(5)),
      quota_usd: maybe(0.1 + int(10) / 20), usd_5h: maybe(0.05 + int(5) / 20), usd_1d: maybe(0.1 + int(10) / 20),
    };
    // Real time less a few minutes: a settlement then counts as recent in both stores (no look into the log).
    let now = Math.floor(Date.now() / 60_000) * 60_000 - 4 * 60_000;
    const pending: Admission[] = [];
    const settled: Admission[] = [];
    let n = 0;
    for (let step = 0; step < 40; step++, steps++) {
      const op = int(10);
      if (op < 5) {
        // One to three admissions at once.
        const reqs = Array.from({ length: 1 + int(3) }, () => ({
          keyId, requestId: `r${round}-${++n}`, now, limits, estimatedTokens: int(120), leaseMs: 5_000 + int(20_000),
          estimatedCost: rand() < 0.5 ? 0 : int(30) / 1000,
        }));
        const [a, b] = await Promise.all(stores.map((s) => Promise.all(reqs.map((r) => s.admit(r)))));
        t.strictSame(b.map(answer), a.map(answer), `round ${round} step ${step}: admissions`);
        for (const r of a) {
          if (r.ok) pending.push(r.admission);
          const why = r.ok ? 'admitted' : `${r.reason}${r.held ? ' (held)' : ''}`;
          reasons.set(why, (reasons.get(why) ?? 0) + 1);
        }
      } else if (op < 8 && pending.length) {
        // Settle one or two; sometimes a repeat of one settled before.
        const take = pending.splice(int(pending.length), 1);
        if (settled.length && rand() < 0.3) take.push(settled[int(settled.length)]);
        const recs = take.map((adm) => record({
          key_id: keyId, request_id: adm.requestId, time: now, input_tokens: int(150), output_tokens: int(50), cost: int(40) / 1000,
        }));
        const [a, b] = await Promise.all(stores.map((s) => Promise.all(take.map((adm, i) => s.settle(recs[i], adm, limits)))));
        t.strictSame(b, a, `round ${round} step ${step}: settlements`);
        settled.push(...take);
      } else if (op < 9 && pending.length) {
        const adm = pending[int(pending.length)];
        // A release, and sometimes its settlement after all (the client left, the usage came anyway).
        await Promise.all(stores.map((s) => s.release(adm)));
        if (rand() < 0.5) {
          pending.splice(pending.indexOf(adm), 1);
          settled.push(adm);
        }
      } else if (pending.length) {
        const adm = pending[int(pending.length)];
        await Promise.all(stores.map((s) => s.heartbeat(adm, 10_000 + int(20_000), now)));
      }
      now += int(4) === 0 ? int(40_000) : int(3_000);
    }
  }
  // Every limit refused some, by what was spent and by what requests in flight held, and many were admitted.
  const seen = JSON.stringify(Object.fromEntries(reasons));
  for (const why of ['concurrency', 'rpm', 'tpm', 'quota_exhausted', 'quota_exhausted (held)', 'window_exhausted', 'window_exhausted (held)']) {
    t.ok((reasons.get(why) ?? 0) > 0, `${steps} steps: ${why} refused some (${seen})`);
  }
  t.ok((reasons.get('admitted') ?? 0) > 400, `many admitted (${seen})`);
});
