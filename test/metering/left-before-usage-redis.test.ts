// Issue 38, item 3 on Redis (left-before-usage-suite.ts): the same records, estimates and slots as on the file store.
import t from 'tap';
import { redisForTest } from '../store/redis-server.ts';
import { leftBeforeUsage } from './left-before-usage-suite.ts';

const redis = await redisForTest(t, 'left-before-usage');
await leftBeforeUsage(t, `store: { redis: "${redis.url}", prefix: "${redis.prefix}" }`);
