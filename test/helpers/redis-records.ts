// Whether a Redis store keeps a request's record, read straight from Redis (lua/log.lua lays the logs out): for tests
// that watch the store from outside, with a connection of their own.
import type { Redis } from 'ioredis';

/** True when the log of `keyId` under `prefix` holds a record of request `id`. */
export async function keptInRedis(c: Redis, prefix: string, keyId: string, id: string): Promise<boolean> {
  const p = `${prefix}{k:${keyId}}:`;
  const members = await c.zrange(`${p}lgi`, '0', '-1');
  if (!members.length) return false;
  const texts = await c.hmget(`${p}lg`, ...members.map((m) => m.split(' ')[0]));
  return texts.some((text) => text?.includes(`"request_id":${JSON.stringify(id)}`));
}
