// createStore: the embedded store when no Redis is configured (kept in a file, or memory only), else a RedisStore
// (single node or Cluster); it logs which store is in use and where its data lives.
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { guardStore, redisError } from './guard.ts';
import { FileStore } from './file.ts';
import { MemoryStore } from './memory.ts';
import type { StoreOptions } from './options.ts';
import { RedisStore } from './redis.ts';
import type { Store } from './types.ts';

export interface CreateStoreOptions extends StoreOptions {
  /** Empty: the embedded store (one process). redis://…, rediss://…, or redis+cluster://host:port,host:port for a Cluster. */
  redis: string;
  /** The embedded store's file (absolute, or relative to the working directory); ":memory:" (the default here) keeps nothing. */
  path?: string;
  /** Key prefix in Redis (default "gw:"). */
  prefix?: string;
  /** Redis: a command not answered within this fails the request with 503 STORE_UNAVAILABLE (a settlement is held). */
  timeoutMs?: number;
}

const CLUSTER = /^redis(s)?\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)/;

/** ioredis reconnects by itself: its connection errors are logged, at most once per 10 s. */
function connectionErrors(log: Logger): (err: Error) => void {
  let loggedAt = -Infinity;
  return (err) => {
    const now = Date.now();
    if (now - loggedAt < 10_000) return;
    loggedAt = now;
    log.warn({ err: redisError(err) }, 'Redis connection error (reconnecting)');
  };
}

/** Settled records written behind (redis-batch.ts) that Redis did not take: logged at most once per 10 s; retried. */
function batchErrors(log: Logger): (err: Error, waiting: number) => void {
  let loggedAt = -Infinity;
  return (err, waiting) => {
    const now = Date.now();
    if (now - loggedAt < 10_000 && !/dropped/.test(err.message)) return;
    loggedAt = now;
    log.error({ err: redisError(err), waiting }, 'Redis did not take a batch of settled records (retrying)');
  };
}

/** A Redis URL for the log: credentials replaced. */
const shown = (url: string): string => url.replace(/\/\/[^@/]*@/, '//***@');

/** The embedded store, or Redis guarded (guard.ts): its failures are 503s and its settlements wait out an outage. */
export async function createStore(options: CreateStoreOptions, log: Logger): Promise<Store> {
  const { redis, path = ':memory:', prefix = 'gw:', timeoutMs, ...rest } = options;
  if (!redis && path === ':memory:') {
    log.info({ store: 'memory' }, 'store: memory only (keys, quotas and usage are lost when the process stops)');
    return new MemoryStore(rest);
  }
  if (!redis) {
    const store = await FileStore.open(path, rest, log);
    log.info({ store: 'file', path, ...store.loaded }, `store: file ${path}`);
    return store;
  }
  log.info({ store: 'redis', url: shown(redis), prefix }, `store: redis ${shown(redis)}`);
  const m = CLUSTER.exec(redis);
  const onConnectionError = connectionErrors(log);
  const onBatchError = batchErrors(log);
  if (!m) return guardStore(new RedisStore({ url: redis, prefix, commandTimeoutMs: timeoutMs, onConnectionError, onBatchError, ...rest }), log);
  const [, tls, auth, hosts] = m;
  const nodes = hosts.split(',').map((h) => {
    const i = h.lastIndexOf(':');
    return i > 0 ? { host: h.slice(0, i), port: Number(h.slice(i + 1)) } : { host: h, port: 6379 };
  });
  const [user, pass] = auth ? auth.split(':').map(decodeURIComponent) : [];
  const client = new Cluster(nodes, {
    enableAutoPipelining: true,
    redisOptions: {
      ...(pass !== undefined ? { username: user || undefined, password: pass } : user ? { password: user } : {}),
      ...(tls ? { tls: {} } : {}),
      ...(timeoutMs ? { commandTimeout: timeoutMs } : {}),
    },
  });
  client.on('error', onConnectionError);
  return guardStore(new RedisStore({ client, closeClient: true, prefix, onBatchError, ...rest }), log);
}

export { FileStore, MemoryStore, RedisStore };
export type { Store };
