// Lease sorted sets (a key's, an account's) are created as skiplists (lua/zadd.lua): a new small set would otherwise be
// a listpack, scanned whole by every ZADD, ZREM and ZSCORE. Created by a call alone (a turn of one) or by a turn of
// several (zset.lua), they hold exactly the members admitted, never the placeholder that made them skiplists. A key's rpm set is left to Redis (a listpack while small).
import t from 'tap';
import { Redis } from 'ioredis';
import { RedisStore } from '../../core/store/redis/store.ts';
import { KeyLayout } from '../../core/store/redis/keys.ts';
import { redisForTest } from './redis-server.ts';

const limits = { rpm: 1000, concurrency: 100 };
const candidates = [{ id: 'a1', priority: 0, weight: 1, concurrency: 100 }];

t.test('lease sets are skiplists from their first member, alone or in a turn; rpm sets as Redis makes them', async (t) => {
  const { url, prefix } = await redisForTest(t, 'zset-encoding');
  const c = new Redis(url);
  const store = new RedisStore({ url, prefix });
  t.teardown(async () => { await store.close(); await c.quit(); });
  const layout = new KeyLayout(prefix);
  const now = Date.now();
  const admit = (keyId: string, requestId: string) =>
    store.admit({ keyId, requestId, now, limits, estimatedTokens: 1, leaseMs: 60_000 });
  const acquire = (group: string, requestId: string) =>
    store.acquireAccount({ group, requestId, now, leaseMs: 60_000, candidates });
  const sets = (keyId: string, group: string) => [layout.key(keyId).lease, layout.key(keyId).rpm, layout.group(group).lease('a1')];
  const state = async (keys: string[]) => Promise.all(keys.map(async (k) => ({
    encoding: await c.object('ENCODING', k), members: (await c.zrange(k, '0', '-1')).sort(),
  })));

  // One call in its turn: the list forms on a turn of one.
  t.ok((await admit('alone', 'r1')).ok);
  t.ok((await acquire('alone', 'r1')).ok);
  t.same(await state(sets('alone', 'alone')), [
    { encoding: 'skiplist', members: ['r1'] }, { encoding: 'listpack', members: ['r1'] }, { encoding: 'skiplist', members: ['r1'] },
  ]);

  // Several calls in one turn: the list forms.
  const ids = ['m1', 'm2', 'm3'];
  const [admitted, acquired] = await Promise.all([
    Promise.all(ids.map((id) => admit('many', id))), Promise.all(ids.map((id) => acquire('many', id))),
  ]);
  t.ok(admitted.every((r) => r.ok) && acquired.every((r) => r.ok));
  t.same(await state(sets('many', 'many')), [
    { encoding: 'skiplist', members: ids }, { encoding: 'listpack', members: ids }, { encoding: 'skiplist', members: ids },
  ]);

  // A set added to (not created) keeps its members as they are.
  t.ok((await admit('alone', 'r2')).ok);
  t.same((await state(sets('alone', 'alone')))[0], { encoding: 'skiplist', members: ['r1', 'r2'] });
});
