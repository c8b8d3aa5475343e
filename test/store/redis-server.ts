// A real Redis for the store tests: REDIS_URL, else a local server answering PING, else a child redis-server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

async function answers(url: string): Promise<boolean> {
  // disconnectTimeout 0: a refused socket never emits close, and ioredis would keep the process up 2 s waiting for it.
  const c = new Redis(url, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 0 });
  c.on('error', () => {});
  try {
    await c.connect();
    return (await c.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

const freePort = () => new Promise<number>((resolve, reject) => {
  const srv = createServer();
  srv.once('error', reject);
  srv.listen(0, '127.0.0.1', () => {
    const { port } = srv.address() as { port: number };
    srv.close(() => resolve(port));
  });
});

export interface TestRedis { url: string; stop(): Promise<void> }

export async function testRedis(local = 'redis://127.0.0.1:6379'): Promise<TestRedis> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => {} };
  if (await answers(local)) return { url: local, stop: async () => {} };
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !(await answers(url)); i++) await new Promise((r) => setTimeout(r, 50));
  if (!(await answers(url))) { child.kill(); throw new Error('redis-server did not start'); }
  return {
    url,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** Deletes every key under `prefix` (SCAN + UNLINK); returns how many there were. */
export async function deletePrefix(url: string, prefix: string): Promise<number> {
  const c = new Redis(url);
  let n = 0;
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await c.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) n += await c.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    await c.quit();
  }
  return n;
}

/**
 * A Redis for one test and a key prefix of its own: the keys under it are deleted (and a Redis started for the test
 * stopped) when the test ends. Registered first, so it runs after the test's later teardowns (its gateways) are done.
 */
export async function redisForTest(t: { teardown(fn: () => unknown): void }, label: string): Promise<{ url: string; prefix: string }> {
  const redis = await testRedis();
  const prefix = `gwtest:${label}:${randomUUID()}:`;
  t.teardown(async () => {
    await deletePrefix(redis.url, prefix);
    await redis.stop();
  });
  return { url: redis.url, prefix };
}
