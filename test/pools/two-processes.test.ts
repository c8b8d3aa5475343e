// Two gateway processes (`node app/main.ts`) on one Redis, then on a Redis Cluster, share the pool's account slots:
// accounts of concurrency 2 and 3 never have more in flight than that, measured at the upstream by a counting proxy, while 24 slow streams fired at once
// (12 per process) all complete by waiting their turn in the queue.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { gatewayProcess } from '../helpers/process.ts';
import { frontProxy } from '../helpers/upstream.ts';
import { redisForTest } from '../store/redis-server.ts';
import { clusterForTest } from '../store/redis-cluster-server.ts';

const KEY = 'sk-two-pool-0001';
const SLOTS: Record<string, number> = { 'credential-a': 2, 'credential-b': 3 };
const REQUESTS = 24;

for (const shared of ['Redis', 'Redis Cluster'] as const) t.test(`two gateway processes on one ${shared}`, async (t) => {
  const store = shared === 'Redis' ? await redisForTest(t, 'pool') : await clusterForTest(t, 'pool-cluster');
  if (!store) return;
  const { url: redisUrl, prefix } = store;

  // ---- the upstream: the simulator behind a proxy that counts requests in flight per account credential ----
  const sim = await startSimulator();
  t.teardown(() => sim.close());
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  let total = 0;
  let totalPeak = 0;
  const upstreamUrl = await frontProxy(t, () => sim.url, (req, res) => {
    const credential = /^Bearer (.*)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? '?';
    inFlight.set(credential, (inFlight.get(credential) ?? 0) + 1);
    peak.set(credential, Math.max(peak.get(credential) ?? 0, inFlight.get(credential)!));
    totalPeak = Math.max(totalPeak, ++total);
    let open = true;
    res.once('close', () => { if (open) { open = false; inFlight.set(credential, inFlight.get(credential)! - 1); total--; } });
  });

  const config = writeConfig(`
server: { host: 127.0.0.1, port: 0 }
store: { redis: "${redisUrl}", prefix: "${prefix}" }
platforms:
  upstream: { base_url: "${upstreamUrl}", auth: bearer, format: [openai-chat], forward_headers: [x-simulator-*] }
groups:
  main:
    platform: upstream
    models: [gpt-4o-mini]
    accounts:
      - { id: a, credential: credential-a, concurrency: ${SLOTS['credential-a']} }
      - { id: b, credential: credential-b, concurrency: ${SLOTS['credential-b']} }
keys:
  - { id: two, key: ${KEY}, group: main }
pipelines:
  relay: [auth, group-check, model-allowlist, { proxy: { queue_timeout_ms: 60000, keepalive_ms: 0 } }]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
`);

  const [a, b] = await Promise.all([gatewayProcess(t, config), gatewayProcess(t, config)]);
  t.not(a.child.pid, b.child.pid, 'two processes');

  // Slow streams (frames 40 ms apart, ~0.5 s each): 24 at once against 5 slots.
  const start = Date.now();
  const results = await Promise.all(Array.from({ length: REQUESTS }, async (_, i) => {
    const res = await fetch((i % 2 ? b : a).url + '/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-simulator-chunk-delay-ms': '40' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: `request ${i} one two three four five six` }] }),
    });
    return { status: res.status, text: await res.text() };
  }));
  const elapsed = Date.now() - start;

  t.test('every account stayed within its concurrency, across both processes', async (t) => {
    for (const [credential, slots] of Object.entries(SLOTS)) {
      t.ok((peak.get(credential) ?? 0) <= slots, `${credential}: at most ${slots} in flight upstream (peak ${peak.get(credential)})`);
      t.equal(peak.get(credential), slots, `${credential}: its slots were all used`);
    }
    t.equal(totalPeak, 5, 'the pool ran at its 5 slots, never more');
    t.same([...inFlight.values()], [0, 0], 'nothing left in flight');
  });

  t.test('every request completed by waiting its turn', async (t) => {
    t.equal(results.filter((r) => r.status === 200 && r.text.endsWith('data: [DONE]\n\n')).length, REQUESTS, `all ${REQUESTS} streams completed`);
    t.equal(sim.requests.length, REQUESTS, 'one upstream request each');
    // 24 streams of ~0.5 s on 5 slots take at least 5 rounds.
    t.ok(elapsed >= 4 * 400, `took ${elapsed} ms`);
    t.comment(`figures: ${REQUESTS} concurrent streams through 2 processes on accounts of concurrency ${Object.values(SLOTS).join(' and ')}: ` +
      `peak in flight ${[...peak.entries()].map(([c, n]) => `${c}=${n}`).join(', ')} (total ${totalPeak}), all 200, ${elapsed} ms`);
  });
});
