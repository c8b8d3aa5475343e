// lua/account-acquire.lua against rules/accounts.ts pickAccount (the memory store's rules): random group states,
// the same roll, the same decision. Catches the two implementations drifting apart.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Redis } from 'ioredis';
import { pickAccount, type CandidateView } from '../../core/store/rules/accounts.ts';
import { scripts } from '../../core/store/lua/index.ts';
import { KeyLayout } from '../../core/store/redis/keys.ts';
import { acquireArgs } from '../../core/store/redis/accounts.ts';
import { T0 } from './fixtures.ts';
import { deletePrefix, testRedis } from './redis-server.ts';

const redis = await testRedis();
const prefix = `gwtest:${process.pid}:${randomBytes(4).toString('hex')}:parity:`;
const c = new Redis(redis.url);
t.teardown(async () => {
  await c.quit();
  await deletePrefix(redis.url, prefix);
  await redis.stop();
});

const int = (n: number) => Math.floor(Math.random() * n);
const pickOne = <X>(xs: X[]): X => xs[int(xs.length)];

t.test('the Lua script decides exactly like pickAccount', async (t) => {
  const layout = new KeyLayout(prefix);
  let mismatches = 0;
  const outcomes = new Map<string, number>();
  for (let round = 0; round < 400; round++) {
    const g = layout.group(`p${round}`);
    const n = int(5);
    const now = T0;
    const cands = Array.from({ length: n }, (_, i) => ({
      id: `a${i}`, priority: 1 + int(2), weight: int(4), concurrency: 1 + int(3),
    }));
    const views: CandidateView[] = [];
    const rid = `req-${round}`;
    for (const a of cands) {
      const live = int(4);
      const holds = live > 0 && int(4) === 0;
      for (let k = 0; k < live; k++) await c.zadd(g.lease(a.id), now + 1000, holds && k === 0 ? rid : `o${k}`);
      if (int(3) === 0) await c.zadd(g.lease(a.id), now - int(2), 'expired'); // at or before now: dropped
      const cool = pickOne([undefined, now - 10, now, now + 500, now + 900]);
      const probe = int(3) === 0;
      const used = pickOne([undefined, now - 3, now - 1]);
      const pass = pickOne([undefined, 0, 333_333, 1_000_000, 1_000_000, 4_000_000]);
      if (pass !== undefined) await c.hset(g.state(a.id), 'pass', pass);
      if (cool !== undefined) await c.hset(g.state(a.id), 'cool', cool, 'why', 'rate_limited');
      if (probe) await c.hset(g.state(a.id), 'probe', '1');
      if (used !== undefined) await c.hset(g.state(a.id), 'used', used);
      views.push({
        priority: a.priority, weight: a.weight, concurrency: probe ? 1 : a.concurrency, inUse: live,
        coolingUntil: cool !== undefined && cool > now ? cool : undefined, lastUsed: used, pass, holds,
      });
    }
    let prefer = n && int(2) ? int(n) : -1;
    let only = int(2) === 1;
    // Half the rounds look the preference up in bindings instead: a missing one, then maybe a sticky or a pin to a
    // candidate or to an account that is not one (ARGV prefer and only are then what the binding says).
    const bindings: { key: string; pin: boolean }[] = [];
    if (int(2)) {
      bindings.push({ key: g.bound('sticky', 'missing'), pin: false });
      const kind = pickOne(['none', 'sticky', 'pin'] as const);
      if (kind !== 'none') {
        const to = n && int(3) ? int(n) : -1;
        await c.set(g.bound(kind, 'name'), to >= 0 ? cands[to].id : 'elsewhere', 'PX', 60_000);
        bindings.push({ key: g.bound(kind, 'name'), pin: kind === 'pin' });
        prefer = to;
        only = kind === 'pin';
      } else {
        prefer = -1;
      }
    }
    const roll = Math.random();
    const want = only && prefer < 0 && bindings.length > 1 ? { refuse: 'none' } : pickAccount(views, prefer, only, now, roll);
    const argPrefer = bindings.length ? 0 : prefer + 1;
    const got = (await scripts.accountAcquire.run(c, [...cands.flatMap((a) => [g.lease(a.id), g.state(a.id)]), ...bindings.map((b) => b.key)], acquireArgs({
      now, id: rid, prefer: argPrefer, only: only && !bindings.length, roll, pins: bindings.map((b) => b.pin), leaseMs: 1000, stateTtlMs: 60_000, cands,
    }))) as number | [number, number | string, number];
    const gotShape = typeof got === 'number' ? { take: (got >> 1) - 1, preferred: (got & 1) === 1 } : got[0] === 1
      ? { take: (got[1] as number) - 1, preferred: got[2] === 1 }
      : { refuse: got[1], ...(got[2] >= 0 ? { retryAfterMs: got[2] } : {}) };
    const wantShape = 'take' in want ? { take: want.take, preferred: want.preferred } : want;
    const key = 'take' in want ? (want.reuse ? 'reuse' : 'take') : want.refuse;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    if ('take' in want && !want.reuse) {
      const stored = Number(await c.hget(g.state(cands[want.take].id), 'pass'));
      if (stored !== want.pass) { mismatches++; t.fail(`round ${round}: lua stored pass ${stored}, ts ${want.pass}`); }
    }
    if (JSON.stringify(gotShape) !== JSON.stringify(wantShape)) {
      mismatches++;
      t.fail(`round ${round}: lua ${JSON.stringify(gotShape)} vs ts ${JSON.stringify(wantShape)} for ${JSON.stringify({ views, prefer, only, roll })}`);
    }
  }
  t.equal(mismatches, 0, `400 random states agree (${JSON.stringify(Object.fromEntries(outcomes))})`);
  for (const k of ['take', 'reuse', 'busy', 'cooling', 'none']) t.ok(outcomes.get(k), `the states covered ${k}`);
});
