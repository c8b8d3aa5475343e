// The stores a parity test drives with the same calls: the memory store (the TypeScript rules), the file store (the
// same rules, kept in a file), Redis and a Redis Cluster of three nodes started here (the Lua scripts; on the Cluster
// each call goes alone, on one Redis the calls of a turn go fused). The Cluster is left out, said in the test's output,
// only where redis-server cannot be started.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Cluster } from 'ioredis';
import { FileStore } from '../../core/store/file/store.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { RedisStore } from '../../core/store/redis/store.ts';
import type { Store } from '../../core/store/types.ts';
import { clusterUnavailable, testCluster } from './redis-cluster-server.ts';
import { redisForTest } from './redis-server.ts';
import type { Tap } from './fixtures.ts';

export interface NamedStore { name: string; store: Store }

/** Memory first (what the others are held to), then file, Redis and the Cluster; each closed when `t` ends. */
export async function parityStores(t: Tap, label: string): Promise<NamedStore[]> {
  const dir = mkdtempSync(join(tmpdir(), `gw-parity-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { url, prefix } = await redisForTest(t, label);
  const stores: NamedStore[] = [
    { name: 'memory', store: new MemoryStore() },
    { name: 'file', store: await FileStore.open(join(dir, 'gateway.db'), {}, pino({ level: 'silent' })) },
    { name: 'redis', store: new RedisStore({ url, prefix }) },
  ];
  const unavailable = clusterUnavailable();
  if (unavailable) t.comment(unavailable);
  else {
    const cluster = await testCluster();
    const clusterPrefix = `${prefix}c:`;
    t.teardown(async () => {
      // A Cluster named by REDIS_CLUSTER_URL outlives the test: its keys go (SCAN is per node).
      const admin = new Cluster(cluster.nodes);
      for (const node of admin.nodes('master')) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${clusterPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length) await node.unlink(...keys);
        } while (cursor !== '0');
      }
      await admin.quit();
      await cluster.stop();
    });
    stores.push({ name: 'cluster', store: new RedisStore({ client: new Cluster(cluster.nodes), closeClient: true, prefix: clusterPrefix }) });
  }
  // Closed before the Cluster and Redis teardowns above run (teardowns run last registered first).
  t.teardown(() => Promise.all(stores.map((s) => s.store.close())));
  return stores;
}
