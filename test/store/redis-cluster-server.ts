// A Redis Cluster for the store tests: REDIS_CLUSTER_URL when set, else three `redis-server --cluster-enabled yes`
// started on free loopback ports (the slots split in three, no replicas), stopped when the tests end.
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { clusterNodes, redisServerMissing, startCluster, type LocalCluster } from '../../scripts/redis-cluster.ts';

export type TestCluster = LocalCluster;

/** Why no cluster can be started here (no redis-server on PATH), or undefined when one can. */
export function clusterUnavailable(): string | undefined {
  if (process.env.REDIS_CLUSTER_URL) return undefined;
  const missing = redisServerMissing();
  return missing ? `${missing}: the Redis Cluster run is skipped` : undefined;
}

export async function testCluster(): Promise<TestCluster> {
  const given = process.env.REDIS_CLUSTER_URL;
  if (given) return { url: given, nodes: clusterNodes(given), stop: async () => {} };
  return startCluster();
}

/**
 * A Redis Cluster for one test and a key prefix of its own, as redisForTest gives a Redis: a Cluster started here is
 * stopped when the test ends (one named by REDIS_CLUSTER_URL loses the prefix's keys). Undefined, said in the test's
 * output, where none can be started.
 */
export async function clusterForTest(t: { teardown(fn: () => unknown): void; comment(...m: unknown[]): void }, label: string): Promise<{ url: string; nodes: TestCluster['nodes']; prefix: string } | undefined> {
  const unavailable = clusterUnavailable();
  if (unavailable) {
    t.comment(unavailable);
    return undefined;
  }
  const cluster = await testCluster();
  const prefix = `gwtest:${label}:${randomUUID()}:`;
  t.teardown(async () => {
    const admin = new Cluster(cluster.nodes);
    for (const node of admin.nodes('master')) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length) await node.unlink(...keys);
      } while (cursor !== '0');
    }
    await admin.quit();
    await cluster.stop();
  });
  return { url: cluster.url, nodes: cluster.nodes, prefix };
}
