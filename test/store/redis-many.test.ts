// A script that takes the calls of one turn together (a `many` script, fuse.ts) must answer each call and leave Redis
// exactly as running the calls one by one, in order, would. Random turns run both ways on two copies of one state,
// then the answers and every key (type, value, whether it expires) are compared.
import t from 'tap';
import { Redis } from 'ioredis';
import { scripts } from '../../core/store/lua/index.ts';
import { KeyLayout } from '../../core/store/redis/keys.ts';
import { acquireArgs } from '../../core/store/redis/accounts.ts';
import type { Tap } from './fixtures.ts';
import { redisForTest } from './redis-server.ts';
import { seeded } from '../helpers/random.ts';

/** Every key under `prefix`: name without it, type, value, and whether it expires. */
async function dump(c: Redis, prefix: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const key of (await c.keys(`${prefix}*`)).sort()) {
    const type = await c.type(key);
    const value = type === 'hash' ? Object.entries(await c.hgetall(key)).sort()
      : type === 'zset' ? await c.zrange(key, '0', '-1', 'WITHSCORES')
        : await c.get(key);
    out.push([key.slice(prefix.length), type, value, (await c.pttl(key)) > 0]);
  }
  return out;
}

/**
 * One turn both ways on two copies of the state `seed` makes: the calls together (one turn, fused), and one by one in
 * `order` (their indexes). Answers and keys are compared (a differing round is shown whole); returns the one-by-one
 * answers and whether both ways agree.
 */
async function bothWays<X>(
  t: Tap, c: Redis, prefix: string, round: number, seed: (p: string) => Promise<void>, calls: X[],
  run: (p: string, x: X) => Promise<unknown>, order = calls.map((_, i) => i),
): Promise<{ alone: unknown[]; same: boolean }> {
  const together = `${prefix}t${round}:`;
  const alone = `${prefix}s${round}:`;
  await seed(together);
  await seed(alone);
  const a = await Promise.all(calls.map((x) => run(together, x)));
  const b: unknown[] = [];
  for (const i of order) b[i] = await run(alone, calls[i]);
  const same = JSON.stringify(a) === JSON.stringify(b)
    && JSON.stringify(await dump(c, together)) === JSON.stringify(await dump(c, alone));
  if (!same) t.strictSame([a, await dump(c, together)], [b, await dump(c, alone)], `round ${round}`);
  return { alone: b, same };
}

const BASE = Date.UTC(2025, 0, 15, 10, 0, 30);
const MINUTE = 60_000;
/** BASE's minute, as held hashes name their fields. */
const M0 = Math.floor(BASE / MINUTE);

t.test('settle: the settlements of a turn together, as one by one', async (t) => {
  const { url, prefix } = await redisForTest(t, 'many-settle');
  const c = new Redis(url);
  t.teardown(() => c.quit());
  let differing = 0;
  for (let round = 1; round <= 25; round++) {
    const rand = seeded(round);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    // What both copies start from: windows that end inside the turn (5h), buckets that exist or not, leases held,
    // records kept already (marked 'k', in a log chunk), releases that happened already, costs
    // held (a minute's field that the turn's settlements empty, or not).
    const seed = async (p: string) => {
      for (const key of ['a', 'b']) {
        const k = new KeyLayout(p).key(key);
        await c.hset(k.acct, 'spend', '5000', 's5h', String(BASE - 18_000_000 + 40), 'u5h', '700', 's1d', String(BASE - 1000), 'u1d', '900');
        await c.set(k.tpm(Math.floor(BASE / MINUTE) * MINUTE), '1000', 'PX', 180_000);
        await c.zadd(k.lease, BASE + 30_000, 'r1', BASE + 30_000, 'r2', BASE + 30_000, 'r5', BASE + 30_000, 'other');
        await c.hset(k.log, 'c1', `${BASE}\t{"request_id":"r7"}\n`);
        await c.zadd(k.logIndex, BASE, `c1 ${BASE} 1`);
        await c.hset(k.markers(Math.floor(BASE / MINUTE) * MINUTE), 'r3', 'k', 'r4', 'r', 'r5', 'r');
        await c.pexpire(k.markers(Math.floor(BASE / MINUTE) * MINUTE), 300_000);
        await c.hset(k.held, String(M0), String(300 + round * 20), String(M0 - 3), '40');
        await c.pexpire(k.held, 960_000);
      }
    };
    const calls = Array.from({ length: 30 }, () => {
      const id = pick(ids);
      // r7's record is in the log at BASE: a repeat carries its record's time.
      const time = id === 'r7' ? BASE : BASE + Math.floor(rand() * 100);
      const minute = (Math.floor(BASE / MINUTE) + (rand() < 0.2 ? 1 : 0)) * MINUTE; // the next minute's bucket does not exist
      const admitted = rand() < 0.8;
      return {
        key: pick(['a', 'b']), id, minute,
        args: [
          id, admitted && rand() < 0.7 ? pick(['1', '1', '=other']) : '', admitted ? String(Math.floor(rand() * 200) - 60) : '', time,
          Math.floor(rand() * 50), pick(['0', String(1 + Math.floor(rand() * 2_000_000)), '123456789']), '600000 86400000',
          // The cost held: in a field of the hash, in one that is not there (lapsed), or none.
          admitted ? pick(['', `${M0} ${1 + Math.floor(rand() * 120)}`, `${M0 - 3} 40`, `${M0 + 1} 50`]) : '',
          // A record older than a marker's life: a repeat is looked for in the log.
          ...(rand() < 0.4 ? [JSON.stringify(id)] : []),
        ],
      };
    });
    const run = (p: string, x: (typeof calls)[number]) => {
      const k = new KeyLayout(p).key(x.key);
      return scripts.settle.run(c, [k.markers(x.minute), k.lease, k.tpm(x.minute), k.acct, k.log, k.logIndex, k.held], x.args);
    };
    if (!(await bothWays(t, c, prefix, round, seed, calls, run)).same) differing++;
  }
  t.equal(differing, 0, '25 rounds of 30 settlements: the same answers and the same keys');
});

t.test('admit: the admissions of a turn together, as one by one', async (t) => {
  const { url, prefix } = await redisForTest(t, 'many-admit');
  const c = new Redis(url);
  t.teardown(() => c.quit());
  let differing = 0;
  const refusals = new Set<string>();
  for (let round = 1; round <= 40; round++) {
    const rand = seeded(1000 + round);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
    const minute = Math.floor(BASE / MINUTE) * MINUTE;
    // Leases held (some expired, one by a request of this turn), rpm entries (some older than the window; round 3n: 62
    // of them, so the 64th-entry pruning falls inside the turn), a tpm bucket part used, spend and windows, costs held
    // (one field lapsed, one that lapses for the calls made in the next minute).
    const seed = async (p: string) => {
      for (const key of ['a', 'b']) {
        const k = new KeyLayout(p).key(key);
        await c.zadd(k.lease, BASE - 5, 'old-1', BASE + 20, 'soon', BASE + 30_000, 'r1', BASE + 30_000, 'held');
        const rpmEntries = round % 3 === 0 ? 62 : 4;
        for (let i = 0; i < rpmEntries; i++) await c.zadd(k.rpm, BASE - 61_000 + i * 1000, `past-${i}`);
        await c.set(k.tpm(minute), '400', 'PX', 180_000);
        await c.hset(k.acct, 'spend', '900', 's5h', String(BASE - 1000), 'u5h', '500', 's1d', String(BASE - 86_400_000 - 1), 'u1d', '99999');
        await c.hset(k.held, String(M0), '60', String(M0 - 14), '30', String(M0 - 15), '999');
        await c.pexpire(k.held, 960_000);
      }
    };
    const calls = Array.from({ length: 30 }, () => {
      const id = pick(ids);
      const limits = [
        pick([0, 0, 0, 1000, 900]), pick([0, 0, 600, 400]), pick([0, 0, 500]), 0, // quota, 5h, 1d, 7d (nano)
        pick([0, 3, 5, 8]), pick([0, 6, 10, 70, 100]), pick([0, 450, 1000, 5000]), // concurrency, rpm, tpm
      ];
      // One call in ten a minute later (BASE + 30 s: the next minute), when the field of M0 - 14 has lapsed.
      const now = BASE + (rand() < 0.1 ? 30_000 : 0) + Math.floor(rand() * 50);
      return {
        key: pick(['a', 'b', 'c']),
        args: [now, id, pick([0, 20, 100, 600]), [pick([30_000, 60_000]), ...limits].join(' '), pick([0, 0, 40, 150])],
      };
    });
    const run = (p: string, x: (typeof calls)[number]) => {
      const k = new KeyLayout(p).key(x.key);
      return scripts.admit.run(c, [k.lease, k.rpm, k.tpm(minute), k.acct, k.held], x.args);
    };
    const { alone, same } = await bothWays(t, c, prefix, round, seed, calls, run);
    for (const r of alone as (number | [number, string, number, string, number?])[]) refusals.add(typeof r === 'number' ? 'admitted' : r[1] + (r[4] === 1 ? ' (held)' : ''));
    if (!same) differing++;
  }
  t.strictSame([...refusals].sort(), [
    'admitted', 'concurrency', 'quota_exhausted', 'quota_exhausted (held)', 'rpm', 'tpm', 'window_exhausted', 'window_exhausted (held)',
  ], 'every answer occurs');
  t.equal(differing, 0, '40 rounds of 30 admissions: the same answers and the same keys');
});

t.test('account acquire and release: the calls of a turn together, as one by one', async (t) => {
  const { url, prefix } = await redisForTest(t, 'many-accounts');
  const c = new Redis(url);
  t.teardown(() => c.quit());
  let differing = 0;
  const answers = new Set<string>();
  for (let round = 1; round <= 40; round++) {
    const rand = seeded(2000 + round);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
    const accounts = ['A', 'B', 'C', 'D'].map((id) => ({
      id, priority: pick([1, 1, 2]), weight: pick([0, 1, 1, 3]), concurrency: pick([1, 2, 3, 5]),
    }));
    const ids = Array.from({ length: 14 }, (_, i) => `q${i}`);
    // Leases (expired ones among them, and slots held by requests of this turn), accounts cooling down or probing,
    // with passes and last uses, sticky sessions and pins.
    const cool = String(BASE + pick([-10, 30, 5000]));
    const pinned = pick(['B', 'elsewhere']);
    const seed = async (p: string) => {
      const g = new KeyLayout(p).group('g');
      await c.zadd(g.lease('A'), BASE - 10, 'gone', BASE + 20, 'q1', BASE + 60_000, 'x');
      await c.zadd(g.lease('B'), BASE + 5, 'brief', BASE + 60_000, 'q2');
      await c.zadd(g.lease('D'), BASE - 1, 'gone-too');
      await c.hset(g.state('A'), 'pass', '2000000', 'used', String(BASE - 100));
      await c.hset(g.state('B'), 'cool', cool, 'why', 'rate_limited', 'probe', '1', 'pass', '1500000');
      await c.hset(g.state('C'), 'probe', '1', 'used', String(BASE - 50));
      await c.set(g.bound('sticky', 's1'), 'C', 'PX', 60_000);
      await c.set(g.bound('pin', 'p1'), pinned, 'PX', 60_000);
    };
    const calls = Array.from({ length: 28 }, () => {
      const now = BASE + Math.floor(rand() * 40);
      const id = pick(ids);
      if (rand() < 0.35) {
        return { kind: 'release' as const, account: pick(['A', 'B', 'C', 'D']), id,
          args: [id, pick(['', String(now), String(BASE + 100)])], binds: rand() < 0.3 ? [pick(['s1', 's2'])] : [] };
      }
      // One candidate (a group of one account: its own path in the list form) about one time in five.
      const cands = rand() < 0.2 ? [pick(accounts)] : accounts.filter(() => rand() < 0.75);
      const bound = rand() < 0.3 ? pick([[['sticky', 's1']], [['pin', 'p1']], [['sticky', 'none'], ['sticky', 's1']]]) : [];
      const prefer = bound.length || !cands.length || rand() < 0.6 ? 0 : 1 + Math.floor(rand() * cands.length);
      return {
        kind: 'acquire' as const, cands, bound, id,
        args: acquireArgs({
          now, id, prefer, only: prefer > 0 && rand() < 0.3, roll: rand(), pins: bound.map((b) => b[0] === 'pin'), leaseMs: pick([1000, 30_000, 5]),
          stateTtlMs: 86_400_000, cands,
        }),
      };
    });
    const run = (p: string, x: (typeof calls)[number]) => {
      const g = new KeyLayout(p).group('g');
      if (x.kind === 'release') {
        return scripts.accountRelease.run(c, [g.lease(x.account), g.state(x.account), ...x.binds.map((b) => g.bound('sticky', b))],
          [...x.args, x.account, ...x.binds.map(() => 60_000)]);
      }
      return scripts.accountAcquire.run(c, [...x.cands.flatMap((a) => [g.lease(a.id), g.state(a.id)]), ...x.bound.map(([k, n]) => g.bound(k, n))], x.args);
    };
    // Together, each script runs all its calls of the turn at the place of its first (fuse.ts): one by one, in that order.
    const first = calls[0].kind;
    const order = [first, first === 'acquire' ? 'release' : 'acquire'].flatMap((kind) => calls.flatMap((x, i) => (x.kind === kind ? [i] : [])));
    const { alone, same } = await bothWays(t, c, prefix, round, seed, calls, run, order);
    for (const r of alone) answers.add(Array.isArray(r) ? (r[0] === 1 ? 'take' : String(r[1])) : 'released');
    if (!same) differing++;
  }
  t.strictSame([...answers].sort(), ['busy', 'cooling', 'none', 'released', 'take'], 'every answer occurs');
  t.equal(differing, 0, '40 rounds of 28 acquisitions and releases: the same answers and the same keys');
});
