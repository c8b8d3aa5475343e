// A local Redis Cluster of three masters (the slots split in three, no replicas) for the tests and the bench: its own
// redis-server processes on free loopback ports, in a temp folder, stopped by their PIDs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export interface LocalCluster { url: string; nodes: { host: string; port: number }[]; stop(): Promise<void> }

const SLOTS = 16384;

/** Why no cluster can be started here (no redis-server on PATH), or undefined when one can. */
export function redisServerMissing(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.error ? 'redis-server is not installed (Debian package redis-server)' : undefined;
}

const listens = (port: number) => new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
});

const freePort = () => new Promise<number>((resolve, reject) => {
  const probe = createServer();
  probe.once('error', reject);
  probe.listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo;
    probe.close(() => resolve(port));
  });
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

/** Starts three `redis-server --cluster-enabled yes` and joins them; `stop()` ends exactly those processes. */
export async function startCluster(): Promise<LocalCluster> {
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

/** The nodes of a redis+cluster:// URL (credentials and options left out). */
export function clusterNodes(url: string): { host: string; port: number }[] {
  return url.replace(/^rediss?\+cluster:\/\/(?:[^@/]*@)?/, '').replace(/[/?#].*$/, '').split(',').map((h) => {
    const i = h.lastIndexOf(':');
    return i > 0 ? { host: h.slice(0, i), port: Number(h.slice(i + 1)) } : { host: h, port: 6379 };
  });
}
