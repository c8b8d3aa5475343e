// The account rules in their two runtimes. lua/account-acquire.lua against rules/accounts.ts pickAccount on random
// group states (the same roll, the same decision); then the memory and file stores against Redis and a Redis Cluster on
// random sequences of acquisitions (preferences, bindings, retries), releases with their endings, heartbeats,
// cool-downs, bindings and passing time (leases expire, cool-downs end): the same answers and account states.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Redis } from 'ioredis';
import { pickAccount, type CandidateView } from '../../core/store/rules/accounts.ts';
import { scripts } from '../../core/store/lua/index.ts';
import { KeyLayout } from '../../core/store/redis/keys.ts';
import { acquireArgs } from '../../core/store/redis/accounts.ts';
import { T0 } from './fixtures.ts';
import { parityStores } from './parity-stores.ts';
import { seeded } from '../helpers/random.ts';
import type { AccountLease, AcquireAccountRequest } from '../../core/store/types.ts';
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

t.test('random sequences: memory, file, Redis and Cluster acquire, refuse, release and cool down alike', async (t) => {
  const named = await parityStores(t, 'account-parity');
  const stores = named.map((n) => n.store);
  let history: string[] = [];
  const same = (got: unknown[], what: string) => {
    for (let i = 1; i < got.length; i++) {
      if (!t.strictSame(got[i], got[0], `${named[i].name}: ${what}`)) t.comment(`the round so far:\n${history.join('\n')}`);
    }
  };
  const seen = new Map<string, number>();
  const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);
  const random = Math.random;
  t.teardown(() => { Math.random = random; });
  for (let round = 1; round <= 40; round++) {
    const rand = seeded(1000 + round);
    const int = (n: number) => Math.floor(rand() * n);
    const group = `g${round}`;
    const pool = Array.from({ length: 1 + int(4) }, (_, i) => ({ id: `a${i}`, priority: 1 + int(2), weight: int(4), concurrency: 1 + int(3) }));
    const ids = pool.map((a) => a.id);
    const names = ['s1', 's2', 'p1'];
    let now = T0;
    const held: AccountLease[] = [];
    let n = 0;
    history = [`pool ${JSON.stringify(pool)}`];
    for (let step = 0; step < 40; step++) {
      const op = int(20);
      const at = `round ${round} step ${step}`;
      if (op < 9) {
        // One to three acquisitions at once, each with its own candidates, preference or bindings to look up; the
        // same roll in every store (a random choice among exact ties).
        const roll = rand();
        const reqs: AcquireAccountRequest[] = Array.from({ length: 1 + int(3) }, () => {
          const candidates = pool.filter(() => rand() < 0.8);
          const how = int(4);
          const retry = held.length > 0 && int(6) === 0;
          return {
            group, requestId: retry ? held[int(held.length)].requestId : `q${round}-${++n}`, now, candidates, leaseMs: 2_000 + int(8_000),
            ...(how === 1 ? { prefer: ids[int(ids.length)], only: rand() < 0.3 } : {}),
            ...(how === 2 ? { bound: [{ kind: 'sticky' as const, name: names[int(2)] }, { kind: 'pin' as const, name: 'p1' }] } : {}),
          };
        });
        Math.random = () => roll;
        const got = await Promise.all(stores.map((s) => Promise.all(reqs.map((r) => s.acquireAccount(r)))));
        Math.random = random;
        history.push(`${now} acquire ${reqs.map((r) => JSON.stringify({ ...r, group: undefined, now: undefined }))} roll ${roll}: ${JSON.stringify(got[0])}`);
        same(got, `${at}: acquisitions`);
        for (const r of got[0]) {
          if (r.ok && !held.some((l) => l.requestId === r.lease.requestId && l.account === r.lease.account)) held.push(r.lease);
          count(r.ok ? (r.bound ? 'taken, bound' : r.preferred ? 'taken, preferred' : 'taken') : r.reason);
        }
      } else if (op < 13 && held.length) {
        // A release, sometimes with a success (ending probing) and bindings to its account.
        const lease = held.splice(int(held.length), 1)[0];
        const ending = int(2) ? { succeededAt: now - int(3_000), bind: int(2) ? [{ kind: 'sticky' as const, name: names[int(2)], ttlMs: 60_000 }] : [] } : undefined;
        await Promise.all(stores.map((s) => s.releaseAccount(lease, ending)));
        history.push(`${now} release ${JSON.stringify(lease)} ${JSON.stringify(ending)}`);
        count(ending ? 'released with an ending' : 'released');
      } else if (op < 15 && held.length) {
        const lease = held[int(held.length)];
        const leaseMs = 2_000 + int(8_000);
        await Promise.all(stores.map((s) => s.heartbeatAccount(lease, leaseMs, now)));
        history.push(`${now} heartbeat ${JSON.stringify(lease)} ${leaseMs}`);
        count('heartbeat');
      } else if (op < 17) {
        const account = ids[int(ids.length)];
        const until = now + int(20_000);
        const reason = (['rate_limited', 'overloaded', 'upstream_error'] as const)[int(3)];
        await Promise.all(stores.map((s) => s.cooldown(group, account, until, reason)));
        history.push(`${now} cooldown ${account} until ${until} ${reason}`);
        count('cooldown');
      } else if (op < 18) {
        const name = names[int(3)];
        const kind = name === 'p1' ? 'pin' as const : 'sticky' as const;
        const account = ids[int(ids.length)];
        const ttlMs = int(4) ? 60_000 : 0;
        await Promise.all(stores.map((s) => s.bind(group, kind, name, account, ttlMs)));
        history.push(`${now} bind ${kind} ${name} ${account} ${ttlMs}`);
        count(ttlMs ? 'bound' : 'unbound');
      }
      same(await Promise.all(stores.map((s) => s.accountStates(group, ids, now))), `${at}: account states`);
      // Mostly within the leases' lives; now and then past them (a crashed holder's lease ends by itself) and the
      // cool-downs.
      now += int(8) === 0 ? 10_000 + int(20_000) : int(1_500);
    }
    same(await Promise.all(stores.map((s) => Promise.all(names.map((name) => s.bound(group, name === 'p1' ? 'pin' : 'sticky', name))))), `round ${round}: bindings`);
  }
  const summary = JSON.stringify(Object.fromEntries(seen));
  for (const what of ['taken', 'taken, preferred', 'taken, bound', 'busy', 'cooling', 'none', 'released', 'released with an ending', 'heartbeat', 'cooldown', 'bound', 'unbound']) {
    t.ok((seen.get(what) ?? 0) > 0, `${what} (${summary})`);
  }
});
