// A Redis Cluster for the store tests: REDIS_CLUSTER_URL when set, else three `redis-server --cluster-enabled yes`
// started on free loopback ports (the slots split in three, no replicas), stopped when the tests end.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { freePort } from '../helpers/process.ts';

export interface TestCluster { url: string; nodes: { host: string; port: number }[]; stop(): Promise<void> }

const SLOTS = 16384;

/** Why no cluster can be started here (no redis-server on PATH), or undefined when one can. */
export function clusterUnavailable(): string | undefined {
  if (process.env.REDIS_CLUSTER_URL) return undefined;
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.error ? 'redis-server is not installed (Debian package redis-server): the Redis Cluster run is skipped' : undefined;
}

const listens = (port: number) => new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
});

/** A free port whose cluster bus port (port + 10000) is free too. */
async function clusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 <= 65_535 && await listens(port + 10_000)) return port;
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function testCluster(): Promise<TestCluster> {
  const given = process.env.REDIS_CLUSTER_URL;
  if (given) {
    const nodes = given.replace(/^redis\+cluster:\/\//, '').split(',').map((h) => ({ host: h.split(':')[0], port: Number(h.split(':')[1]) }));
    return { url: given, nodes, stop: async () => {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < 3; i++) ports.push(await clusterPort());
  const children: ChildProcess[] = ports.map((port) => spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
    '--cluster-node-timeout', '5000', '--dir', dir, '--save', '', '--appendonly', 'no',
  ], { stdio: 'ignore' }));
  const stop = async () => {
    await Promise.all(children.map((c) => new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    })));
    rmSync(dir, { recursive: true, force: true });
  };
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1 }));
  try {
    for (const c of clients) await until('a node answers PING', async () => { if (c.status === 'wait') await c.connect(); return (await c.ping()) === 'PONG'; });
    // Each node serves a third of the slots; the first meets the others, and gossip does the rest.
    for (let i = 0; i < 3; i++) await clients[i].cluster('ADDSLOTSRANGE', Math.floor((i * SLOTS) / 3), Math.floor(((i + 1) * SLOTS) / 3) - 1);
    for (const port of ports.slice(1)) await clients[0].cluster('MEET', '127.0.0.1', port);
    for (const c of clients) await until('every node sees cluster_state:ok', async () => /cluster_state:ok/.test(String(await c.cluster('INFO'))));
  } catch (err) {
    await stop();
    throw err;
  } finally {
    for (const c of clients) c.disconnect();
  }
  return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
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
