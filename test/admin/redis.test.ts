// Two gateway processes' worth of gateways on one Redis: a key issued, revoked or deleted on one takes effect on the other at once.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { admin, adminConfig, chat, eventually, issue } from './helpers.ts';

const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
probe.on('error', () => {}); // reachability is decided below; ioredis would otherwise log every failed attempt
const reachable = await probe.connect().then(() => probe.ping()).then(() => true, () => false);

if (!reachable) {
  probe.disconnect();
  // In CI a missing Redis is a failure, not a reason to skip.
  if (process.env.CI) t.fail(`Redis is not reachable at ${url} (required in CI)`);
  else t.plan(0, `Redis is not reachable at ${url}: start redis-server or set REDIS_URL to run the two-gateway test`);
} else {
  const prefix = `gwtest:${randomUUID()}:`;
  t.teardown(async () => {
    // Remove everything this test wrote, and only that (the prefix is unique to this run).
    for (let cursor = '0'; ;) {
      const [next, found] = await probe.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (found.length) await probe.del(...found);
      if ((cursor = next) === '0') break;
    }
    await probe.quit();
  });
  // A long auth cache: only the store's change notice can make another process see a revocation quickly.
  const config = adminConfig({ store: `store: { redis: "${url}", prefix: "${prefix}" }`, authCacheMs: 600_000 });
  const a = await withGateway(t, config);
  const b = await withGateway(t, config);

  t.test('issued on A: works on B at once; revoked on A: refused on B within a second', async (t) => {
    const { key, record } = await issue(a, { group: 'main', name: 'shared' });
    t.equal(await chat(b, key), 200, 'B serves a key it has never seen, issued on A');
    t.equal(await chat(b, key), 200, 'and now holds it in its auth cache');

    t.equal((await admin(a, 'PATCH', `/admin/keys/${record.id}`, { disabled: true })).status, 200);
    const started = Date.now();
    const refused = await eventually(() => chat(b, key), (s) => s === 401, 1000);
    t.equal(refused, 401, 'B refuses the revoked key');
    t.ok(Date.now() - started < 1000, `within ${Date.now() - started} ms, far below B's 600 s cache`);

    t.equal((await admin(b, 'PATCH', `/admin/keys/${record.id}`, { disabled: false })).status, 200);
    t.equal(await eventually(() => chat(a, key), (s) => s === 200, 1000), 200, 'enabled on B: A serves it again');

    t.equal((await admin(b, 'DELETE', `/admin/keys/${record.id}`)).status, 200);
    t.equal(await eventually(() => chat(a, key), (s) => s === 401, 1000), 401, 'deleted on B: A refuses it');
  });

  t.test('both processes list the same keys and the same ledger', async (t) => {
    const { key, record } = await issue(b, { group: 'other' });
    const listed = (await admin(a, 'GET', '/admin/keys')).body.keys.map((k: { id: string }) => k.id);
    t.ok(listed.includes(record.id), 'A lists the key B issued');
    t.equal(await chat(a, key), 200);
    t.equal(await chat(b, key), 200);
    const fromA = await eventually(() => admin(a, 'GET', `/admin/usage?key=${record.id}`), (r) => r.body.records.length >= 2);
    const fromB = await admin(b, 'GET', `/admin/usage?key=${record.id}`);
    t.equal(fromA.body.records.length, 2, 'one record per request, whichever process served it');
    t.same(fromB.body.records, fromA.body.records);
    t.equal((await admin(b, 'GET', `/admin/keys/${record.id}/usage`)).body.usage.usage.total.requests, 2);
  });
}
