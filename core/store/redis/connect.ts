// The Redis store as createStore opens it (one node or a Cluster, guarded, errors logged); loaded only when store.redis
// is set, so the embedded store never loads ioredis.
import { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { guardStore, redisError } from '../guard.ts';
import type { StoreOptions } from '../options.ts';
import { RedisStore } from './store.ts';
import type { Store } from '../types.ts';

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

/** Settled records written behind (batch.ts) that Redis did not take: logged at most once per 10 s; retried. */
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

export async function openRedisStore(redis: string, o: { prefix: string; timeoutMs?: number } & StoreOptions, log: Logger): Promise<Store> {
  const { prefix, timeoutMs, ...rest } = o;
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
