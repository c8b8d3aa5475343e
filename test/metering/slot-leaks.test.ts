// Every slot taken is given back, even when Redis stalls or restarts: an admission or account decision whose answer came
// too late (or was resent after a reconnect) has its slot released once Redis answers, and a release that failed during
// the outage is retried. Uses a redis-server of its own, paused with SIGSTOP and killed.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { redisProcess, type RedisProcess } from '../helpers/redis-process.ts';

const KEY = 'sk-leaky-0001';
const ACCOUNTS = ['acct-1', 'acct-2'];

async function setup(t: Test, persist = false) {
  const redis = await redisProcess(t, { persist });
  const prefix = `gwtest:leaks:${randomUUID()}:`;
  const gw = await withGateway(t, chatConfig({
    keyId: 'leaky', key: KEY, limits: 'concurrency: 4', accounts: 2,
    store: `redis: "${redis.url}", prefix: "${prefix}", timeout_ms: 300`,
  }));
  const chat = (stream = false, chunkDelayMs = 20) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-simulator-chunk-delay-ms': String(chunkDelayMs) },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'Hello there, world!' }] }),
  }).then(async (res) => ({ status: res.status, text: await res.text() }));
  /** Slots held in Redis: the key's concurrency leases and each account's. */
  const held = (r: RedisProcess) => r.query(async (c) => ({
    key: await c.zcard(`${prefix}{k:leaky}:lease`),
    accounts: (await Promise.all(ACCOUNTS.map((a) => c.zcard(`${prefix}{g:main}:lease:${a}`)))).reduce((x, y) => x + y, 0),
  }));
  /** Waits (up to 5 s) for every slot to be free; returns what was still held at the end. */
  const drained = async (r: RedisProcess) => {
    let h = await held(r);
    for (let i = 0; i < 50 && (h.key || h.accounts); i++, await sleep(100)) h = await held(r);
    return h;
  };
  return { redis, chat, held, drained };
}

t.test('a stalled Redis (SIGSTOP): admissions and account decisions answered too late give their slots back', async (t) => {
  const { redis, chat, drained } = await setup(t);
  t.equal((await chat()).status, 200, 'served while Redis is up');

  redis.pause();
  const refused = await Promise.all(Array.from({ length: 12 }, () => chat()));
  t.same([...new Set(refused.map((r) => r.status))], [503], 'all 12 refused with 503 STORE_UNAVAILABLE while Redis is stalled');
  await sleep(1500);
  redis.resume();

  t.same(await drained(redis), { key: 0, accounts: 0 }, 'no key or account slot is left held once Redis answers');
  const next = await Promise.all(Array.from({ length: 4 }, () => chat(true)));
  t.same(next.map((r) => r.status), [200, 200, 200, 200], 'the key\'s 4 concurrent slots are all free at once');
  t.ok(next.every((r) => r.text.includes('data: [DONE]')), 'and each stream completes');
});

t.test('a Redis restart: the slots of streams under way when it died are given back once it is back', async (t) => {
  // A Redis that keeps its data (append-only file): after the restart it still holds every slot taken before.
  const { redis, chat, held, drained } = await setup(t, true);
  t.equal((await chat()).status, 200);

  const streams = Promise.all(Array.from({ length: 4 }, () => chat(true, 150)));
  await sleep(300);
  t.same(await held(redis), { key: 4, accounts: 4 }, 'four streams hold a key slot and an account slot each');
  await redis.kill();
  const done = await streams;
  t.ok(done.every((r) => r.status === 200 && r.text.includes('data: [DONE]')), 'the streams finished for their clients');
  await redis.restart();

  t.same(await drained(redis), { key: 0, accounts: 0 }, 'nothing held in the restarted Redis');
  const started = performance.now();
  const next = await Promise.all(Array.from({ length: 4 }, () => chat(true)));
  t.same(next.map((r) => r.status), [200, 200, 200, 200], 'four concurrent streams are served');
  t.ok(performance.now() - started < 5000, 'at once, without waiting for a slot');
});

t.test('streams that end while Redis is stalled: their releases are held and land once it answers', async (t) => {
  const { redis, chat, drained } = await setup(t);
  // Two slow streams hold a key slot and an account slot each when Redis stalls, and end during the stall.
  const streams = Promise.all([chat(true, 150), chat(true, 150)]);
  await sleep(300);
  redis.pause();
  const done = await streams;
  t.ok(done.every((r) => r.status === 200 && r.text.includes('data: [DONE]')), 'both streams finished for their clients');
  await sleep(500);
  redis.resume();
  t.same(await drained(redis), { key: 0, accounts: 0 }, 'their key and account slots were given back once Redis answered');
});
