// Command-line pieces the bench scripts share: bounded numbers, the store choice, usage on a mistake.

/** A number within bounds, so a typo does not turn into an hour-long or machine-choking run. */
export function number(value: string, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** `--store file|redis`: the Redis URL (REDIS_URL, else 127.0.0.1:6379) for redis, undefined for the embedded store. */
export function redisFor(store: string): string | undefined {
  if (store !== 'file' && store !== 'redis') throw new Error(`--store: file or redis, got "${store}"`);
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
