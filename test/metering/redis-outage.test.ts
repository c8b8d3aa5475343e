// Redis goes away and comes back: requests get the gateway's own 503 STORE_UNAVAILABLE (fast, in the client's format)
// instead of hanging, a stream already under way finishes and its usage is held, and once Redis answers again the held
// settlement is written: the ledger loses nothing. Uses a redis-server of its own, stopped and restarted on one port.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import t from 'tap';
import { RedisStore } from '../../core/store/redis/store.ts';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { metricsText, metricValue } from '../helpers/http.ts';
import { freePort } from '../helpers/process.ts';
import { keptInRedis } from '../helpers/redis-records.ts';

const KEY = 'sk-outage-0001';

async function redisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  for (let i = 0; i < 100; i++) {
    if (await probe.connect().then(() => probe.ping(), () => undefined) === 'PONG') break;
    await sleep(50);
  }
  probe.disconnect();
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGKILL');
  await once(child, 'exit');
}

t.test('a Redis outage: 503 STORE_UNAVAILABLE meanwhile, held usage written when Redis is back', async (t) => {
  const port = await freePort();
  let redis = await redisServer(port);
  t.teardown(() => stop(redis));
  const prefix = `gwtest:outage:${randomUUID()}:`;
  const gw = await withGateway(t, chatConfig({
    keyId: 'outage', key: KEY, limits: 'concurrency: 5', store: `redis: "redis://127.0.0.1:${port}", prefix: "${prefix}", timeout_ms: 300`,
  }));
  const chat = (id: string, stream: boolean, headers: Record<string, string> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-request-id': id, ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'Hello there, world!' }] }),
  });
  const recordedNow = async (id: string): Promise<boolean> => {
    const c = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => {});
    try {
      await c.connect();
      return await keptInRedis(c, prefix, 'outage', id);
    } catch {
      return false;
    } finally {
      c.disconnect();
    }
  };
  // Records are written behind, in batches of at most 100 ms (redis/batch.ts): allow a second.
  const recorded = async (id: string): Promise<boolean> => {
    for (let i = 0; i < 20; i++, await sleep(50)) if (await recordedNow(id)) return true;
    return false;
  };

  // Records are kept under the gateway's own request id, which the response names.
  const first = await chat(`outage-before-${randomUUID()}`, false);
  t.equal(first.status, 200);
  t.ok(await recorded(first.headers.get('x-request-id')!), 'recorded while Redis is up');
  t.equal(metricValue(await metricsText(gw.url), 'gateway_store_available'), 1, 'the store is available');

  // A slow stream is under way (its account and admission taken) when Redis dies.
  const res = await chat(`outage-stream-${randomUUID()}`, true, { 'x-simulator-chunk-delay-ms': '150' });
  t.equal(res.status, 200);
  const streamed = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  await reader.read();
  await stop(redis);
  let text = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
  t.match(text, /data: \[DONE\]/, 'the stream finished for the client');

  const started = performance.now();
  const refused = await chat(`outage-refused-${randomUUID()}`, false);
  const took = performance.now() - started;
  const body = await refused.json() as { error: { code: string; type: string } };
  t.equal(refused.status, 503);
  t.equal(body.error.code, 'STORE_UNAVAILABLE', 'the gateway\'s own error, in OpenAI\'s envelope');
  t.equal(refused.headers.get('retry-after'), '1');
  t.ok(took < 2000, `answered in ${Math.round(took)} ms (store timeout 300 ms), not left hanging`);
  let pending = 0;
  for (let i = 0; i < 40 && pending === 0; i++, await sleep(50)) pending = metricValue(await metricsText(gw.url), 'gateway_settlements_pending') ?? 0;
  t.equal(pending, 1, 'the stream\'s settlement is held');
  t.equal(metricValue(await metricsText(gw.url), 'gateway_store_available'), 0, 'the store is reported unavailable');

  redis = await redisServer(port);
  let back = false;
  for (let i = 0; i < 150 && !back; i++, await sleep(100)) back = await recorded(streamed);
  t.ok(back, 'the held settlement reached Redis once it was back');
  t.equal(metricValue(await metricsText(gw.url), 'gateway_settlements_pending'), 0);
  t.equal(metricValue(await metricsText(gw.url), 'gateway_store_available'), 1, 'and available again');
  const after = await chat(`outage-after-${randomUUID()}`, false);
  t.equal(after.status, 200, 'served again');
  t.ok(await recorded(after.headers.get('x-request-id')!));
});

t.test('issued-key change notices: a gateway started while Redis is away subscribes once it is back', async (t) => {
  const port = await freePort();
  const prefix = `gwtest:outage-feed:${randomUUID()}:`;
  const store = new RedisStore({ url: `redis://127.0.0.1:${port}`, prefix, commandTimeoutMs: 300 });
  let notices = 0;
  const live = store.onKeysChanged(() => { notices++; });
  await sleep(700);
  const redis = await redisServer(port);
  t.teardown(() => stop(redis));
  await live;
  t.equal(notices, 1, 'subscribed late: told to reload once (changes may have been missed)');
  const other = new RedisStore({ url: `redis://127.0.0.1:${port}`, prefix });
  await other.putKey({ id: 'late', sha256: 'sha-late', group: 'g', pools: [], limits: {}, disabled: false, created_at: Date.now() });
  for (let i = 0; i < 40 && notices < 2; i++) await sleep(50);
  t.equal(notices, 2, 'a key issued afterwards is announced');
  await other.close();
  await store.close();
});
