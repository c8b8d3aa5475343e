// The Store contract on RedisStore over a Redis Cluster of three nodes: REDIS_CLUSTER_URL
// (redis+cluster://host:port,host:port) when set, else three redis-server --cluster-enabled started here.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import t from 'tap';
import { Cluster } from 'ioredis';
import { createStore } from '../../core/store/index.ts';
import { RedisStore } from '../../core/store/redis/store.ts';
import { contract } from './contract.ts';
import { T0, callCounter, issued } from './fixtures.ts';
import { hammer } from './redis-hammer.ts';
import { accountHammer } from './redis-account-hammer.ts';
import { clusterUnavailable, testCluster } from './redis-cluster-server.ts';

const unavailable = clusterUnavailable();
if (unavailable) {
  t.test('Redis Cluster', { skip: unavailable }, async () => {});
} else {
  const cluster = await testCluster();
  const { url, nodes } = cluster;
  const runPrefix = `gwtest:${process.pid}:${randomBytes(4).toString('hex')}:`;
  let n = 0;
  const nextPrefix = () => `${runPrefix}${++n}:`;
  const admin = new Cluster(nodes);
  t.teardown(async () => {
    // SCAN is per node: clean every master.
    for (const node of admin.nodes('master')) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${runPrefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const k of keys) await node.unlink(k);
      } while (cursor !== '0');
    }
    await admin.quit();
    await cluster.stop();
  });

  t.test('the cluster serves its slots from several masters', async (t) => {
    await admin.ping();
    const masters = admin.nodes('master').length;
    t.ok(process.env.REDIS_CLUSTER_URL ? masters >= 1 : masters === 3, `${masters} masters`);
  });

  contract(t, async (options) => new RedisStore({ client: new Cluster(nodes), closeClient: true, prefix: nextPrefix(), ...options }));

  t.test('createStore understands redis+cluster:// and shares notices across stores', async (t) => {
    const prefix = nextPrefix();
    const a = await createStore({ redis: url, prefix }, pino({ level: 'silent' }));
    const b = await createStore({ redis: url, prefix }, pino({ level: 'silent' }));
    t.teardown(async () => { await a.close(); await b.close(); });
    const c = callCounter();
    await b.onKeysChanged(c.listener);
    await a.putKey(issued({ id: 'cl', sha256: 'sha-cl' }));
    await c.until(1);
    t.equal((await b.getKey('sha-cl'))?.id, 'cl');
  });

  t.test('two cluster clients hammering one key', async (t) => {
    const prefix = nextPrefix();
    const a = new RedisStore({ client: new Cluster(nodes), closeClient: true, prefix });
    const b = new RedisStore({ client: new Cluster(nodes), closeClient: true, prefix });
    t.teardown(async () => { await a.close(); await b.close(); });
    const r = await hammer(() => new Cluster(nodes), a, b, { concurrency: 2, rpm: 30, workers: 6, attempts: 30 });
    t.ok(r.maxLeases <= 2 && r.maxHeld <= 2 && r.admitted <= 30, JSON.stringify({ ...r, settled: r.settled.length }));
    await b.flush(); // a reads what b wrote behind
    t.strictSame((await a.keyUsage('hammer', { days: 1, now: T0 })).total, r.expected);
  });

  t.test('two cluster clients sharing one account of concurrency 2', async (t) => {
    const prefix = nextPrefix();
    const a = new RedisStore({ client: new Cluster(nodes), closeClient: true, prefix });
    const b = new RedisStore({ client: new Cluster(nodes), closeClient: true, prefix });
    t.teardown(async () => { await a.close(); await b.close(); });
    const r = await accountHammer(() => new Cluster(nodes), a, b, { concurrency: 2, workers: 8, attempts: 20 });
    t.ok(r.maxLeases <= 2 && r.maxHeld <= 2 && r.acquired === 160 && r.released === 160 && r.leftover === 0, JSON.stringify(r));
  });
}
