// The Store contract on RedisStore against a real Redis, plus the key layout, TTLs and two processes sharing one
// API key or one upstream account.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import t from 'tap';
import { Redis } from 'ioredis';
import { createStore } from '../../core/store/index.ts';
import { LuaScript } from '../../core/store/lua/index.ts';
import { RedisStore } from '../../core/store/redis/store.ts';
import { contract } from './contract.ts';
import { callCounter, issued, T0, admitReq, record } from './fixtures.ts';
import { deletePrefix, testRedis } from './redis-server.ts';
import { hammer } from './redis-hammer.ts';
import { accountHammer } from './redis-account-hammer.ts';

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

t.test('key layout: one hash tag per API key, {global} and its stripes {global:<i>} for the rest; everything but issued keys expires', async (t) => {
  const prefix = nextPrefix();
  const s = new RedisStore({ url: redis.url, prefix });
  t.teardown(() => s.close());
  await s.putKey(issued({ id: 'lay', sha256: 'sha-lay' }));
  const a = await s.admit(admitReq({ concurrency: 2, rpm: 5, tpm: 1000 }, T0, { keyId: 'lay', estimatedTokens: 10 }));
  await s.admit(admitReq({ concurrency: 2, rpm: 5, tpm: 1000 }, T0, { keyId: 'lay' }));
  if (!a.ok) return t.fail('admit');
  await s.settle(record({ key_id: 'lay', request_id: a.admission.requestId, cost: 1, input_tokens: 3 }), a.admission, {});
  await s.settle(record({ key_id: 'lay', request_id: 'other' }), undefined, {});
  await s.flush(); // records and rollups are written behind (redis/batch.ts)
  const c = new Redis(redis.url);
  t.teardown(() => c.quit());
  const keys = (await c.keys(`${prefix}*`)).sort();
  const rest = keys.map((k) => k.slice(prefix.length));
  t.ok(rest.every((k) => /^\{(k:lay|global|global:\d+)\}:/.test(k)), `hash-tagged: ${rest.join(' ')}`);
  for (const name of ['lease', 'rpm', 'acct', 'total', 'day:2025-01-15', 'dm:2025-01-15', 'hr:2025-01-15', 'hm:2025-01-15', 'lg', 'lgi']) {
    t.ok(rest.includes(`{k:lay}:${name}`), `per-key ${name}`);
  }
  for (const k of keys) {
    const ttl = await c.pttl(k);
    if (/\{global\}:key(s|ids)$/.test(k)) t.equal(ttl, -1, `${k} is kept`);
    else t.ok(ttl > 0, `${k} expires (${ttl} ms)`);
  }
  t.equal(await c.hget(`${prefix}{k:lay}:acct`, 'spend'), '1000000000', 'spend in nano-dollars');
  t.strictSame(await c.hgetall(`${prefix}{k:lay}:hr:2025-01-15`), { '10:requests': '2', '10:input_tokens': '3', '10:cost': '1000000000' }, 'hourly rollup by UTC hour');
  t.strictSame(await c.hgetall(`${prefix}{k:lay}:hm:2025-01-15`), { '10:requests:claude-x': '2', '10:input_tokens:claude-x': '3', '10:cost:claude-x': '1000000000' });
  const hourTtl = await c.pttl(`${prefix}{k:lay}:hr:2025-01-15`);
  t.ok(hourTtl > 91 * 86_400_000 && hourTtl <= 92 * 86_400_000, 'hourly rollups are kept 92 days');
  t.strictSame(await c.hmget(`${prefix}{k:lay}:total`, 'duration_ms', 'timed'), ['20', '2'], 'summed durations and the requests timed');
});

t.test('usage days: rollups written before hourly ones existed count on the local date of their UTC midday', async (t) => {
  const prefix = nextPrefix();
  const s = new RedisStore({ url: redis.url, prefix });
  t.teardown(() => s.close());
  const c = new Redis(redis.url);
  t.teardown(() => c.quit());
  await s.settle(record({ key_id: 'old', time: Date.parse('2025-01-15T15:00:00Z'), input_tokens: 1 }), undefined, {}); // Jan 15, 23:00 in Shanghai
  await s.settle(record({ key_id: 'old', time: Date.parse('2025-01-15T17:00:00Z'), input_tokens: 2 }), undefined, {}); // Jan 16, 01:00
  // Two requests an older gateway rolled up into the UTC day only, no hour: midday UTC is Jan 15, 20:00 in Shanghai.
  await c.hincrby(`${prefix}{k:old}:day:2025-01-15`, 'requests', 2);
  await c.hincrby(`${prefix}{k:old}:day:2025-01-15`, 'input_tokens', 40);
  await c.hincrby(`${prefix}{k:old}:dm:2025-01-15`, 'requests:claude-x', 2);
  await c.hincrby(`${prefix}{k:old}:dm:2025-01-15`, 'input_tokens:claude-x', 40);
  const u = await s.keyUsage('old', { days: 2, from: '2025-01-15', to: '2025-01-15', now: Date.parse('2025-01-15T18:00:00Z'), timezone: 'Asia/Shanghai' });
  t.strictSame(u.days.map((d) => [d.date, d.requests, d.input_tokens]), [['2025-01-15', 3, 41], ['2025-01-16', 1, 2]]);
  t.strictSame(u.models.map((m) => [m.model, m.requests, m.input_tokens]), [['claude-x', 3, 41]]);
});

t.test('settle markers live ten minutes at most; a repeat after that is still caught by the record kept', async (t) => {
  const prefix = nextPrefix();
  const s = new RedisStore({ url: redis.url, prefix });
  t.teardown(() => s.close());
  const c = new Redis(redis.url);
  t.teardown(() => c.quit());
  const r = record({ key_id: 'mark', request_id: 'once', input_tokens: 3, cost: 0.5 });
  t.strictSame(await s.settle(r, undefined, {}), { recorded: true });
  // The markers of a key's requests of one minute are fields of one hash, which lives ten minutes past its last write.
  const marker = `${prefix}{k:mark}:mk:${Math.floor(r.time / 60_000)}`;
  t.equal(await c.hget(marker, 'once'), 'd', 'the marker: a field of its minute\'s hash');
  const ttl = await c.pttl(marker);
  t.ok(ttl > 590_000 && ttl <= 600_000, `the marker expires in ten minutes (${ttl} ms), not with the 30-day records`);
  await s.flush(); // long written by then
  await c.del(marker); // as if ten minutes had passed
  t.strictSame(await s.settle({ ...r, cost: 9 }, undefined, {}), { recorded: false }, 'the kept record says it was settled');
  t.equal((await s.keyUsage('mark', { days: 1, now: T0 })).total.cost, 0.5, 'counted once');
});

t.test('account key layout: one hash tag per group, every key expires', async (t) => {
  const prefix = nextPrefix();
  const s = new RedisStore({ url: redis.url, prefix });
  t.teardown(() => s.close());
  const c = [{ id: 'acc-1', priority: 1, weight: 1, concurrency: 2 }, { id: 'acc-2', priority: 2, weight: 1, concurrency: 1 }];
  const r = await s.acquireAccount({ group: 'grp', requestId: 'lay-1', now: Date.now(), candidates: c, leaseMs: 30_000 });
  t.ok(r.ok);
  const until = Date.now() + 3_600_000;
  await s.cooldown('grp', 'acc-2', until, 'rate_limited');
  await s.bind('grp', 'sticky', 'sess-1', 'acc-1', 60_000);
  await s.bind('grp', 'pin', 'resp_1', 'acc-1', 120_000);
  const cl = new Redis(redis.url);
  t.teardown(() => cl.quit());
  const rest = (await cl.keys(`${prefix}*`)).map((k) => k.slice(prefix.length)).sort();
  t.strictSame(rest, ['{g:grp}:lease:acc-1', '{g:grp}:pin:resp_1', '{g:grp}:state:acc-1', '{g:grp}:state:acc-2', '{g:grp}:sticky:sess-1']);
  const ttl = async (k: string) => cl.pttl(`${prefix}{g:grp}:${k}`);
  t.ok((await ttl('lease:acc-1')) > 30_000 && (await ttl('lease:acc-1')) <= 90_000, 'leases: lease + 60 s');
  t.ok((await ttl('state:acc-1')) > 86_000_000 && (await ttl('state:acc-1')) <= 86_400_000, 'state: a day after last use');
  t.ok((await ttl('state:acc-2')) > 89_000_000 && (await ttl('state:acc-2')) <= 90_000_000, 'state: the cool-down, then a day');
  t.ok((await ttl('sticky:sess-1')) > 0 && (await ttl('sticky:sess-1')) <= 60_000);
  t.ok((await ttl('pin:resp_1')) > 60_000 && (await ttl('pin:resp_1')) <= 120_000);
  t.strictSame(await cl.hgetall(`${prefix}{g:grp}:state:acc-2`), { cool: String(until), why: 'rate_limited', probe: '1' });
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
  const made = await createStore({ redis: redis.url, prefix: nextPrefix() }, pino({ level: 'silent' }));
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
  await a.flush(); // b reads what a wrote behind; another process's settlements may lag by up to BATCH_MS
  const u = await b.keyUsage('hammer', { days: 1, now: T0 });
  t.strictSame(u.total, r.expected, 'totals equal the sum of the settled records');
  t.equal((await a.records({ key: 'hammer', limit: 1000 })).records.length, r.settled.length);
  t.equal(u.windows[2].used, r.expected.cost);
});

t.test('two processes sharing one account of concurrency 2: never more than 2 leases, every one released', async (t) => {
  const prefix = nextPrefix();
  const a = new RedisStore({ url: redis.url, prefix });
  const b = new RedisStore({ url: redis.url, prefix });
  t.teardown(async () => { await a.close(); await b.close(); });
  const r = await accountHammer(() => new Redis(redis.url), a, b, { concurrency: 2, workers: 12, attempts: 25 });
  t.ok(r.maxHeld <= 2, `at most 2 slots held by the workers at once (saw ${r.maxHeld})`);
  t.ok(r.maxLeases <= 2, `at most 2 leases in Redis at once (saw ${r.maxLeases} over ${r.samples} samples)`);
  t.ok(r.maxHeld === 2 || r.maxLeases === 2, 'the test did run requests side by side');
  t.ok(r.busy > 0, `workers were turned away while the account was full (${r.busy} times)`);
  t.equal(r.acquired, 12 * 25, 'every worker got every slot it asked for, eventually');
  t.equal(r.released, r.acquired);
  t.equal(r.leftover, 0, 'no lease left behind');
  t.strictSame((await b.accountStates('hammer', ['solo'], T0)).map((x) => x.inFlight), [0]);
});
