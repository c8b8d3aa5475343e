// Command-line pieces the bench scripts share: bounded numbers, the store choice, usage on a mistake.

/** A number within bounds, so a typo does not turn into an hour-long or machine-choking run. */
export function number(value: string, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** A whole number within bounds (a count: keys, connections), refused rather than rounded when it has a fraction. */
export function whole(value: string, name: string, min: number, max: number): number {
  const n = number(value, name, min, max);
  if (!Number.isInteger(n)) throw new Error(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** `--store redis-cluster` before its Cluster is started (startLocalCluster gives the real URL). */
export const LOCAL_CLUSTER = 'redis+cluster://local';

/**
 * `--store file|redis|redis-cluster`: the Redis URL (REDIS_URL, else 127.0.0.1:6379) for redis, LOCAL_CLUSTER for
 * redis-cluster (where `cluster` allows it), undefined for the embedded store.
 */
export function redisFor(store: string, o: { cluster?: boolean } = {}): string | undefined {
  const kinds = o.cluster ? ['file', 'redis', 'redis-cluster'] : ['file', 'redis'];
  if (!kinds.includes(store)) throw new Error(`--store: ${kinds.join(' or ')}, got "${store}"`);
  if (store === 'redis-cluster') return LOCAL_CLUSTER;
  return store === 'redis' ? process.env.REDIS_URL || 'redis://127.0.0.1:6379' : undefined;
}

/** Runs `parse` (parseArgs and the checks after it); a mistake comes back with the usage text appended. */
export function withUsage<R>(usage: string, parse: () => R): R {
  try {
    return parse();
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${usage}`);
  }
}

/** `--help`: the usage text, and nothing run. */
export function helpAndExit(usage: string): never {
  process.stdout.write(usage + '\n');
  process.exit(0);
}
