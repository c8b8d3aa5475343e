// A redis-server of the test's own, on a port it picks, that the test can pause (SIGSTOP), resume, kill and restart:
// for the fault tests, which must never stop a Redis other tests share.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './process.ts';

interface Teardown { teardown(fn: () => unknown): void }

export interface RedisProcess {
  port: number;
  url: string;
  /** SIGSTOP: the server holds every connection and answers nothing until resumed. */
  pause(): void;
  resume(): void;
  /** SIGKILL, waiting for the exit (everything in memory is gone: it keeps nothing on disk). */
  kill(): Promise<void>;
  /** A fresh server on the same port. */
  restart(): Promise<void>;
  /** A short-lived connection for looking at what the gateway left in Redis. */
  query<T>(fn: (redis: Redis) => Promise<T>): Promise<T>;
}

async function answering(port: number, password: string | undefined): Promise<boolean> {
  const probe = new Redis(port, '127.0.0.1', { password, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try { return await probe.connect().then(() => probe.ping(), () => undefined) === 'PONG'; } finally { probe.disconnect(); }
}

async function launch(port: number, dir: string | undefined, args: string[], password: string | undefined): Promise<ChildProcess> {
  // With a data folder, every write is in its append-only file before it is answered: a restart brings it all back.
  const persistence = dir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] : ['--appendonly', 'no'];
  const auth = password === undefined ? [] : ['--requirepass', password];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, ...auth, ...args], { stdio: 'ignore' });
  for (let i = 0; i < 100 && !(await answering(port, password)); i++) await sleep(50);
  return child;
}

/**
 * `persist`: keep every write on disk (append-only file), as a production Redis would across a restart. `args`: more
 * of redis-server's options. `password`: the server requires it (the url carries it).
 */
export async function redisProcess(t: Teardown, opts: { persist?: boolean; args?: string[]; password?: string } = {}): Promise<RedisProcess> {
  const port = await freePort();
  const dir = opts.persist ? mkdtempSync(join(tmpdir(), 'gw-redis-')) : undefined;
  let child = await launch(port, dir, opts.args ?? [], opts.password);
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  t.teardown(async () => {
    await kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    port,
    url: opts.password === undefined ? `redis://127.0.0.1:${port}` : `redis://:${encodeURIComponent(opts.password)}@127.0.0.1:${port}`,
    pause: () => { child.kill('SIGSTOP'); },
    resume: () => { child.kill('SIGCONT'); },
    kill,
    async restart() { await kill(); child = await launch(port, dir, opts.args ?? [], opts.password); },
    async query(fn) {
      const c = new Redis(port, '127.0.0.1', { password: opts.password, maxRetriesPerRequest: 1 });
      c.on('error', () => {});
      try { return await fn(c); } finally { c.disconnect(); }
    },
  };
}
