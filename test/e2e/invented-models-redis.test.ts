// Invented model names on Redis (invented-models-suite.ts): the key's day-per-model hash holds a bounded number of models.
import { Redis } from 'ioredis';
import t from 'tap';
import { utcDate } from '../../core/store/units.ts';
import { redisForTest } from '../store/redis-server.ts';
import { inventedModelsSuite } from './invented-models-suite.ts';

// 2 000+ requests through one process (client, gateway, simulator): ~12 s of CPU, past 60 s on a loaded machine.
t.setTimeout(150_000);

const redis = await redisForTest(t, 'invented-models');
const client = new Redis(redis.url);
t.teardown(() => client.quit());

await inventedModelsSuite(t, `store: { redis: "${redis.url}", prefix: "${redis.prefix}" }`, async () => {
  const fields = await client.hkeys(`${redis.prefix}{k:inventor}:dm:${utcDate(Date.now())}`);
  return fields.filter((f) => f.startsWith('requests:')).map((f) => f.slice('requests:'.length));
});
