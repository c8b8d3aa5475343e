// createStore: the embedded MemoryStore when no Redis is configured, else a RedisStore (single node or Cluster).
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { guardStore, redisError } from './guard.ts';
import { MemoryStore } from './memory.ts';
import type { StoreOptions } from './options.ts';
import { RedisStore } from './redis.ts';
import type { Store } from './types.ts';

export interface CreateStoreOptions extends StoreOptions {
  /** Empty: in-memory (one process). redis://…, rediss://…, or redis+cluster://host:port,host:port for a Cluster. */
  redis: string;
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

/** The embedded store, or Redis guarded (guard.ts): its failures are 503s and its settlements wait out an outage. */
export function createStore(options: CreateStoreOptions, log: Logger): Store {
  const { redis, prefix = 'gw:', timeoutMs, ...rest } = options;
  if (!redis) return new MemoryStore(rest);
  const m = CLUSTER.exec(redis);
  const onConnectionError = connectionErrors(log);
  if (!m) return guardStore(new RedisStore({ url: redis, prefix, commandTimeoutMs: timeoutMs, onConnectionError, ...rest }), log);
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
  return guardStore(new RedisStore({ client, closeClient: true, prefix, ...rest }), log);
}

export { MemoryStore, RedisStore };
export type { Store };
