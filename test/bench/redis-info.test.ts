// The bench's Redis figures: INFO text parsed, and a window's cost per request (the INFO calls themselves left out).
import t from 'tap';
import { Cluster, Redis } from 'ioredis';
import { LOCAL_CLUSTER, redisFor } from '../../bench/options.ts';
import { parseInfo, perRequest, RedisInfo, sumSamples } from '../../bench/redis-info.ts';
import { redisServerMissing, startCluster } from '../../scripts/redis-cluster.ts';

const stats = (evalsha: number, hincrby: number, info: number) =>
  `# Commandstats\r\ncmdstat_evalsha:calls=${evalsha},usec=10,usec_per_call=1.00\r\ncmdstat_hincrby:calls=${hincrby},usec=5\r\ncmdstat_info:calls=${info},usec=1\r\n`;
const cpu = (sys: number, user: number) => `# CPU\r\nused_cpu_sys:${sys}\r\nused_cpu_user:${user}\r\nused_cpu_sys_children:0.5\r\n`;

t.test('parseInfo reads calls by command and the server\'s own CPU seconds', async (t) => {
  const s = parseInfo(stats(10, 3, 7), cpu(1.25, 2.5));
  t.strictSame([...s.calls], [['evalsha', 10], ['hincrby', 3], ['info', 7]]);
  t.equal(s.cpuS, 3.75);
});

t.test('perRequest divides the window\'s deltas by the requests answered', async (t) => {
  const before = parseInfo(stats(100, 50, 1), cpu(1, 1));
  const after = parseInfo(stats(540, 52, 3), cpu(1.01, 1.006));
  t.strictSame(perRequest(before, after, 100), { calls: 4.42, byCommand: { evalsha: 4.4 }, cpuUs: 160 });
});

t.test('a Cluster\'s samples: calls and CPU summed over its masters, the busiest one\'s share of the CPU', async (t) => {
  const shard = (evalsha: number, cpuS: number) => parseInfo(stats(evalsha, 0, 0), cpu(cpuS, 0));
  const before = sumSamples([shard(10, 1), shard(20, 2), shard(30, 3)]);
  const after = sumSamples([shard(110, 1.0002), shard(220, 2.0006), shard(330, 3.0002)]);
  t.strictSame(before.shardCpuS, [1, 2, 3]);
  const r = perRequest(before, after, 100);
  t.equal(r.calls, 6);
  t.equal(r.cpuUs, 10);
  t.equal(r.shards, 3);
  t.strictSame(r.shardShares, [0.2, 0.6, 0.2]);
  t.equal(r.busiestShare, 0.6);
  t.equal(sumSamples([shard(1, 1)]).shardCpuS, undefined, 'one Redis: no shards');
});

t.test('--store redis-cluster: a Cluster the bench starts, sampled over its three masters', async (t) => {
  t.equal(redisFor('redis-cluster', { cluster: true }), LOCAL_CLUSTER);
  t.throws(() => redisFor('redis-cluster'), /--store: file or redis/, 'where no Cluster can be started (soak, ic)');
  const missing = redisServerMissing();
  if (missing) return void t.comment(`${missing}: the Cluster part is not run`);
  const cluster = await startCluster();
  t.teardown(() => cluster.stop());
  const info = new RedisInfo(cluster.url);
  t.teardown(() => info.close());
  const client = new Cluster(cluster.nodes);
  t.teardown(() => client.quit());
  const before = await info.sample();
  t.equal(before.shardCpuS?.length, 3, 'each master sampled');
  // Keys on every master: 300 SETs, whichever slot each lands on.
  for (let i = 0; i < 300; i++) await client.set(`bench-info-test:${i}`, '1', 'PX', 60_000);
  const after = await info.sample();
  const r = perRequest(before, after, 100);
  t.ok(r.byCommand.set === 3, `3 SETs a request over the masters: ${JSON.stringify(r.byCommand)}`);
  t.equal(r.shards, 3);
  t.ok(r.busiestShare! > 0 && r.busiestShare! < 1, `busiest share ${r.busiestShare}`);
  // masters(): the master a hash tag's keys live on, as the Cluster itself places them (--keys's report line).
  const tags = [...Array.from({ length: 8 }, (_, i) => `k:bench-info-test-${i}`), 'g:bench-info-test'];
  const masters = await info.masters(tags);
  t.equal(masters?.length, tags.length);
  t.ok(new Set(masters).size > 1, `the tags spread over masters: ${masters?.join(' ')}`);
  for (const [i, tag] of tags.entries()) {
    await client.set(`{${tag}}:x`, '1', 'PX', 60_000);
    const node = new Redis(cluster.nodes[masters![i]]);
    t.equal(await node.get(`{${tag}}:x`), '1', `${tag} on master ${masters![i] + 1}`);
    node.disconnect();
  }
});

t.test('masters(): none on one Redis', async (t) => {
  const info = new RedisInfo(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
  t.teardown(() => info.close());
  t.equal(await info.masters(['k:bench']), null);
});
