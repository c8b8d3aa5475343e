// The stores a parity test drives with the same calls: the memory store (the TypeScript rules), the file store (the
// same rules, kept in a file), Redis and a Redis Cluster of three nodes started here (the Lua scripts; on the Cluster
// each call goes alone, on one Redis the calls of a turn go fused).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Cluster } from 'ioredis';
import { FileStore } from '../../core/store/file/store.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { RedisStore } from '../../core/store/redis/store.ts';
import type { Store } from '../../core/store/types.ts';
import { clusterForTest } from './redis-cluster-server.ts';
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
  const cluster = await clusterForTest(t, `${label}-cluster`);
  if (cluster) stores.push({ name: 'cluster', store: new RedisStore({ client: new Cluster(cluster.nodes), closeClient: true, prefix: cluster.prefix }) });
  // Closed before the Cluster and Redis teardowns above run (teardowns run last registered first).
  t.teardown(() => Promise.all(stores.map((s) => s.store.close())));
  return stores;
}
