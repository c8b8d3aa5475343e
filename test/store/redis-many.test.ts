// A script that takes the calls of one turn together (a `many` script, fuse.ts) must answer each call and leave Redis
// exactly as running the calls one by one, in order, would. Random turns run both ways on two copies of one state,
// then the answers and every key (type, value, whether it expires) are compared.
import t from 'tap';
import { Redis } from 'ioredis';
import { scripts } from '../../core/store/lua/index.ts';
import { KeyLayout } from '../../core/store/redis-keys.ts';
import { redisForTest } from './redis-server.ts';

/** A small seeded generator (mulberry32): a failing round can be run again. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every key under `prefix`: name without it, type, value, and whether it expires. */
async function dump(c: Redis, prefix: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const key of (await c.keys(`${prefix}*`)).sort()) {
    const type = await c.type(key);
    const value = type === 'hash' ? Object.entries(await c.hgetall(key)).sort()
      : type === 'zset' ? await c.zrange(key, 0, -1, 'WITHSCORES')
        : await c.get(key);
    out.push([key.slice(prefix.length), type, value, (await c.pttl(key)) > 0]);
  }
  return out;
}

const BASE = Date.UTC(2025, 0, 15, 10, 0, 30);
const MINUTE = 60_000;

t.test('settle: the settlements of a turn together, as one by one', async (t) => {
  const { url, prefix } = await redisForTest(t, 'many-settle');
  const c = new Redis(url);
  t.teardown(() => c.quit());
  let differing = 0;
  for (let round = 1; round <= 25; round++) {
    const rand = random(round);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    // What both copies start from: windows that end inside the turn (5h), buckets that exist or not, leases held,
    // records kept already, releases that happened already.
    const seed = async (p: string) => {
      for (const key of ['a', 'b']) {
        const k = new KeyLayout(p).key(key);
        await c.hset(k.acct, 'spend', '5000', 's5h', String(BASE - 18_000_000 + 40), 'u5h', '700', 's1d', String(BASE - 1000), 'u1d', '900');
        await c.set(k.tpm(Math.floor(BASE / MINUTE) * MINUTE), '1000', 'PX', 180_000);
        await c.zadd(k.lease, BASE + 30_000, 'r1', BASE + 30_000, 'r2', BASE + 30_000, 'r5', BASE + 30_000, 'other');
        await c.hset(k.records, 'r3', '{}');
        await c.set(k.released('r4'), '1', 'PX', 300_000);
        await c.set(k.released('r5'), '1', 'PX', 300_000);
      }
    };
    const calls = Array.from({ length: 30 }, () => {
      const id = pick(ids);
      const time = BASE + Math.floor(rand() * 100);
      const minute = (Math.floor(BASE / MINUTE) + (rand() < 0.2 ? 1 : 0)) * MINUTE; // the next minute's bucket does not exist
      const admitted = rand() < 0.8;
      return {
        key: pick(['a', 'b']), id, minute,
        args: [
          id, admitted && rand() < 0.7 ? id : '', admitted ? String(Math.floor(rand() * 200) - 60) : '', time,
          Math.floor(rand() * 50), pick(['0', String(1 + Math.floor(rand() * 2_000_000)), '123456789']), 600_000, 86_400_000,
        ],
      };
    });
    const run = (p: string, x: (typeof calls)[number]) => {
      const k = new KeyLayout(p).key(x.key);
      return scripts.settle.run(c, [k.done(x.id), k.lease, k.tpm(x.minute), k.acct, k.released(x.id), k.records], x.args);
    };
    const together = `${prefix}t${round}:`;
    const alone = `${prefix}s${round}:`;
    await seed(together);
    await seed(alone);
    const a = await Promise.all(calls.map((x) => run(together, x)));
    const b: unknown[] = [];
    for (const x of calls) b.push(await run(alone, x));
    const same = JSON.stringify(a) === JSON.stringify(b)
      && JSON.stringify(await dump(c, together)) === JSON.stringify(await dump(c, alone));
    if (!same) {
      differing++;
      t.strictSame([a, await dump(c, together)], [b, await dump(c, alone)], `round ${round}`);
    }
  }
  t.equal(differing, 0, '25 rounds of 30 settlements: the same answers and the same keys');
});
