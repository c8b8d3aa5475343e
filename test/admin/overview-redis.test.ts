// The console's admin routes on Redis (overview-suite.ts): the same answers as on the embedded store.
import t from 'tap';
import { redisForTest } from '../store/redis-server.ts';
import { overviewSuite } from './overview-suite.ts';

const redis = await redisForTest(t, 'overview');
await overviewSuite(t, `store: { redis: "${redis.url}", prefix: "${redis.prefix}" }`);
