// createStore: the embedded MemoryStore when no Redis is configured, else a RedisStore (single node or Cluster).
import { Cluster } from 'ioredis';
import { MemoryStore } from './memory.ts';
import type { StoreOptions } from './options.ts';
import { RedisStore } from './redis.ts';
import type { Store } from './types.ts';

export interface CreateStoreOptions extends StoreOptions {
  /** Empty: in-memory (one process). redis://…, rediss://…, or redis+cluster://host:port,host:port for a Cluster. */
  redis: string;
  /** Key prefix in Redis (default "gw:"). */
  prefix?: string;
}

const CLUSTER = /^redis(s)?\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)/;

export function createStore(options: CreateStoreOptions): Store {
  const { redis, prefix = 'gw:', ...rest } = options;
  if (!redis) return new MemoryStore(rest);
  const m = CLUSTER.exec(redis);
  if (!m) return new RedisStore({ url: redis, prefix, ...rest });
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
    },
  });
  return new RedisStore({ client, closeClient: true, prefix, ...rest });
}

export { MemoryStore, RedisStore };
export type { Store };
