// Webhooks on Redis: two gateway processes (`node app/main.ts`) on one Redis see the same key cross its quota and the
// same account refused, and the receiver gets one delivery per event, listed alike by either process; a gateway whose
// Redis stalls (its own redis-server, SIGSTOP) says store.down, and store.up once it answers again.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { gatewayProcess } from '../helpers/process.ts';
import { redisProcess } from '../helpers/redis-process.ts';
import { receiver, verifySignature } from '../helpers/receiver.ts';
import { admin, eventually } from '../admin/helpers.ts';
import { redisForTest } from '../store/redis-server.ts';
import { chat, COST, hookConfig, SECRET, sleep } from './helpers.ts';

t.test('two gateway processes on one Redis: one delivery per event', async (t) => {
  const { url: redisUrl, prefix } = await redisForTest(t, 'hooks');
  const r = await receiver(t);
  const config = writeConfig(hookConfig({ url: r.url, limits: 'quota_usd: 1', store: `redis: "${redisUrl}", prefix: "${prefix}"` }));
  const [a, b] = await Promise.all([gatewayProcess(t, config), gatewayProcess(t, config)]);

  // Both processes fail on the refused account at once: each pauses it, and each finds the group exhausted.
  t.same(await Promise.all([chat(a.url, 'sk-pool-0001'), chat(b.url, 'sk-pool-0001')]), [429, 429]);
  // The key's spend crosses 80 % and then 100 % with requests on both: each process looks at it after its own.
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    statuses.push(await chat(i % 2 ? b.url : a.url));
    // The next request goes to the other process: it must see this one settled, not still holding its estimate.
    await eventually(() => admin(a.url, 'GET', '/admin/keys/q'), (x) => x.body.spent >= COST * (i + 1) - 1e-9);
  }
  t.same(statuses, [200, 200, 200, 200, 200, 200, 200, 200], '8 × 0.14 = 1.12 of 1.00');
  await sleep(1200);
  // Looked at again by both, now past both shares: nothing new may go out.
  t.same(await Promise.all([chat(a.url), chat(b.url)]), [429, 429], 'the quota refuses on both');
  await r.until(4);
  await sleep(2500);
  const sent = r.received.map((x) => [x.json.event, x.json.data.percent ?? x.json.data.account ?? x.json.data.group]).sort();
  t.same(sent, [['account.attention', 'revoked'], ['group.exhausted', 'pool'], ['key.quota', 100], ['key.quota', 80]], 'each event once');
  for (const x of r.received) t.ok(verifySignature(SECRET, x.body, x.headers['x-gateway-signature']), `${x.json.event} signed`);

  const listed = await Promise.all([a, b].map((p) => eventually(() => admin(p.url, 'GET', '/admin/notifications'), (x) => x.body.deliveries.length === 4)));
  const ids = listed.map((l) => l.body.deliveries.map((d: any) => d.id).sort());
  t.same(ids[0], r.received.map((x) => x.json.id).sort(), 'the list holds what the receiver got');
  t.same(ids[1], ids[0], 'either process lists every process\'s deliveries');
});

t.test('a stalled Redis: store.down from the process that saw it, store.up once it answers again', async (t) => {
  const redis = await redisProcess(t);
  const r = await receiver(t);
  const prefix = `gwtest:hooks:${randomUUID()}:`;
  const { gateway } = await withLoggedGateway(t, writeConfig(hookConfig({
    url: r.url, events: ['store.down', 'store.up'], limits: 'quota_usd: 100', store: `redis: "${redis.url}", prefix: "${prefix}", timeout_ms: 300`,
  })));
  t.equal(await chat(gateway.url), 200);
  redis.pause();
  t.equal(await chat(gateway.url), 503, 'STORE_UNAVAILABLE');
  const [down] = await r.until(1);
  t.equal(down.json.event, 'store.down');
  t.match(down.json.data, { store: 'redis', instance: `${(await import('node:os')).hostname()}:${process.pid}`, pending_settlements: Number });
  await sleep(500);
  redis.resume();
  await eventually(() => chat(gateway.url), (s) => s === 200, 5000);
  const [, up] = await r.until(2);
  t.equal(up.json.event, 'store.up');
  t.ok(up.json.data.down_ms >= 400, `down for ${up.json.data.down_ms} ms`);
  // The store.down delivery was kept in memory while Redis was away, and written behind the next one.
  const listed = await eventually(() => admin(gateway, 'GET', '/admin/notifications'), (x) => x.body.deliveries.length === 2);
  t.same(listed.body.deliveries.map((d: any) => [d.event, d.result]), [['store.up', 'sent'], ['store.down', 'sent']]);
  const kept = await redis.query((c) => c.lrange(`${prefix}{global}:deliveries`, 0, -1));
  t.same(kept.map((x) => JSON.parse(x).event).sort(), ['store.down', 'store.up'], 'both are in Redis');
});
