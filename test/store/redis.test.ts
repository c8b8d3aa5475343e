// The Store contract on RedisStore against a real Redis, plus the key layout, TTLs and two processes sharing one key.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Redis } from 'ioredis';
import { createStore } from '../../core/store/index.ts';
import { LuaScript } from '../../core/store/lua/index.ts';
import { RedisStore } from '../../core/store/redis.ts';
import { contract } from './contract.ts';
import { callCounter, issued, T0, admitReq, record } from './fixtures.ts';
import { deletePrefix, testRedis } from './redis-server.ts';
import { hammer } from './redis-hammer.ts';

const redis = await testRedis();
const runPrefix = `gwtest:${process.pid}:${randomBytes(4).toString('hex')}:`;
let n = 0;
const nextPrefix = () => `${runPrefix}${++n}:`;
t.teardown(async () => {
  await deletePrefix(redis.url, runPrefix);
  await redis.stop();
});

contract(t, async (options) => new RedisStore({ url: redis.url, prefix: nextPrefix(), ...options }));

t.test('two stores on one prefix share issued keys and change notices', async (t) => {
  const prefix = nextPrefix();
  const a = new RedisStore({ url: redis.url, prefix });
  const b = new RedisStore({ url: redis.url, prefix });
  t.teardown(async () => { await a.close(); await b.close(); });
  const c = callCounter();
  await b.onKeysChanged(c.listener);
  await a.putKey(issued({ id: 'shared', sha256: 'sha-shared' }));
  await c.until(1);
  t.equal((await b.getKey('sha-shared'))?.id, 'shared');
  await a.updateKey('shared', { disabled: true });
  await c.until(2);
  t.equal((await b.getKey('sha-shared'))?.disabled, true);
});

t.test('key layout: one hash tag per API key, {global} for the rest; everything but issued keys expires', async (t) => {
  const prefix = nextPrefix();
  const s = new RedisStore({ url: redis.url, prefix });
  t.teardown(() => s.close());
  await s.putKey(issued({ id: 'lay', sha256: 'sha-lay' }));
  const a = await s.admit(admitReq({ concurrency: 2, rpm: 5, tpm: 1000 }, T0, { keyId: 'lay', estimatedTokens: 10 }));
  await s.admit(admitReq({ concurrency: 2, rpm: 5, tpm: 1000 }, T0, { keyId: 'lay' }));
  if (!a.ok) return t.fail('admit');
  await s.settle(record({ key_id: 'lay', request_id: a.admission.requestId, cost: 1, input_tokens: 3 }), a.admission, {});
  await s.settle(record({ key_id: 'lay', request_id: 'other' }), undefined, {});
  const c = new Redis(redis.url);
  t.teardown(() => c.quit());
  const keys = (await c.keys(`${prefix}*`)).sort();
  const rest = keys.map((k) => k.slice(prefix.length));
  t.ok(rest.every((k) => /^\{(k:lay|global)\}:/.test(k)), `hash-tagged: ${rest.join(' ')}`);
  for (const name of ['lease', 'rpm', 'acct', 'total', 'day:2025-01-15', 'dm:2025-01-15', 'rec', 'idx']) {
    t.ok(rest.includes(`{k:lay}:${name}`), `per-key ${name}`);
  }
  for (const k of keys) {
    const ttl = await c.pttl(k);
    if (/\{global\}:key(s|ids)$/.test(k)) t.equal(ttl, -1, `${k} is kept`);
    else t.ok(ttl > 0, `${k} expires (${ttl} ms)`);
  }
  t.equal(await c.hget(`${prefix}{k:lay}:acct`, 'spend'), '1000000000', 'spend in nano-dollars');
});

t.test('scripts Redis never saw are loaded on demand (NOSCRIPT fallback)', async (t) => {
  const c = new Redis(redis.url);
  t.teardown(() => c.quit());
  const fresh = new LuaScript('inline', `return ARGV[1] .. '${randomBytes(8).toString('hex')}'`);
  t.match(await fresh.run(c, [`${runPrefix}x`], ['ok-']), /^ok-[0-9a-f]{16}$/);
});

t.test('a caller-owned client stays open after close(); createStore makes a RedisStore from a URL', async (t) => {
  const c = new Redis(redis.url);
  const s = new RedisStore({ client: c, prefix: nextPrefix() });
  s.onKeysChanged(() => {});
  await s.close();
  t.equal(await c.ping(), 'PONG');
  await c.quit();
  const made = createStore({ redis: redis.url, prefix: nextPrefix() });
  t.equal(made.kind, 'redis');
  await made.close();
});

t.test('two processes hammering one key: concurrency and rpm hold in total, the ledger is exact', async (t) => {
  const prefix = nextPrefix();
  const a = new RedisStore({ url: redis.url, prefix });
  const b = new RedisStore({ url: redis.url, prefix });
  t.teardown(async () => { await a.close(); await b.close(); });
  const r = await hammer(() => new Redis(redis.url), a, b, { concurrency: 2, rpm: 40, workers: 8, attempts: 40 });
  t.ok(r.maxHeld <= 2, `at most 2 leases held by the workers at once (saw ${r.maxHeld})`);
  t.ok(r.maxLeases <= 2, `at most 2 leases in Redis at once (saw ${r.maxLeases} over ${r.samples} samples)`);
  t.ok(r.maxHeld === 2 || r.maxLeases === 2, 'the test did run requests side by side');
  t.ok(r.admitted <= 40 && r.admitted > 2, `admitted ${r.admitted} <= rpm 40`);
  t.equal(r.doubleRecorded, r.settled.length, 'each record was recorded once though both processes settled it');
  const u = await b.keyUsage('hammer', { days: 1, now: T0 });
  t.strictSame(u.total, r.expected, 'totals equal the sum of the settled records');
  t.equal((await a.records({ key: 'hammer', limit: 1000 })).records.length, r.settled.length);
  t.equal(u.windows[2].used, r.expected.cost);
});
