// createStore: the embedded store when no Redis is configured (kept in a file, or memory only), else a RedisStore
// (single node or Cluster, redis/connect.ts, loaded only then); it logs which store is in use and where its data lives.
import type { Logger } from 'pino';
import { FileStore } from './file/store.ts';
import { MemoryStore } from './memory/store.ts';
import type { StoreOptions } from './options.ts';
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
  const { openRedisStore } = await import('./redis/connect.ts');
  return openRedisStore(redis, { prefix, timeoutMs, ...rest }, log);
}

export { FileStore, MemoryStore };
export type { Store };
