// Two gateway processes (`node app/main.ts`) on one Redis, then on a Redis Cluster, one upstream: a key with concurrency
// 2 and rpm 6 is held to those limits in total, whichever process its requests reach. Waves of 10 slow streams (5 per process, chat and
// messages) are fired at once; a counting proxy in front of the simulator measures how many are in flight upstream.
// Every refusal is the gateway's own 429; the ledger, read from either process, holds exactly the admitted requests.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { gatewayProcess } from '../helpers/process.ts';
import { frontProxy } from '../helpers/upstream.ts';
import { admin, eventually } from '../admin/helpers.ts';
import { redisForTest } from '../store/redis-server.ts';
import { clusterForTest } from '../store/redis-cluster-server.ts';

const KEY = 'sk-capped-two-0001';
const CONCURRENCY = 2;
const RPM = 6;
const WAVE = 10;
const WAVES = 4; // 3 × 2 admitted fills the rpm window; the 4th wave is refused by rpm alone

// The simulator's numbers for "Hello there, wonderful world" in one user turn: prompt (3 + 5) + 3 = 11, reply
// "Echo: Hello there, wonderful world" = 7 tokens, in both formats.
const H = 'Hello there, wonderful world';
const INPUT = 11;
const OUTPUT = 7;
const PRICE = { 'gpt-4o-mini': { input: 0.15, output: 0.60 }, 'claude-haiku-4-5': { input: 1.0, output: 5.0 } } as const;
const costOf = (model: keyof typeof PRICE) => (INPUT * PRICE[model].input + OUTPUT * PRICE[model].output) / 1e6;

// Everything lives in one test: its teardowns (processes, upstream, Redis keys) run once its subtests are done.
for (const shared of ['Redis', 'Redis Cluster'] as const) t.test(`two gateway processes on one ${shared}`, async (t) => {
  const store = shared === 'Redis' ? await redisForTest(t, 'two') : await clusterForTest(t, 'two-cluster');
  if (!store) return;
  const { url: redisUrl, prefix } = store;

  // ---- the upstream: the simulator behind a proxy that counts requests in flight ----
  const sim = await startSimulator();
  t.teardown(() => sim.close());
  let inFlight = 0;
  let maxInFlight = 0;
  const upstreamUrl = await frontProxy(t, () => sim.url, (_req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let open = true;
    res.once('close', () => { if (open) { open = false; inFlight--; } });
  });

  const config = writeConfig(`
server: { host: 127.0.0.1, port: 0 }
store: { redis: "${redisUrl}", prefix: "${prefix}" }
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  upstream: { base_url: "${upstreamUrl}", auth: bearer, format: [openai-chat, anthropic-messages], forward_headers: [x-simulator-*] }
groups:
  main:
    platform: upstream
    models: [gpt-4o-mini, claude-haiku-4-5]
    accounts:
      - { id: up-1, credential: upstream-credential-1 }
keys:
  - { id: capped, key: ${KEY}, group: main, limits: { concurrency: ${CONCURRENCY}, rpm: ${RPM} } }
pricing:
  gpt-4o-mini: { input: 0.15, output: 0.60 }
  claude-haiku-4-5: { input: 1.0, output: 5.0 }
`);

  const [a, b] = await Promise.all([gatewayProcess(t, config), gatewayProcess(t, config)]);
  t.not(a.child.pid, b.child.pid, 'two processes');

  interface Sent { id: string; process: 'A' | 'B'; model: keyof typeof PRICE; status: number; headers: Headers; body: string }

  /** One slow stream (frames 200 ms apart, over 2 s in all, so a wave's requests all meet the first two in flight), read to the end. */
  async function send(process: 'A' | 'B', format: 'chat' | 'messages', id: string): Promise<Sent> {
    const base = process === 'A' ? a.url : b.url;
    const headers = { 'content-type': 'application/json', 'x-request-id': id, 'x-simulator-chunk-delay-ms': '200' };
    const res = format === 'chat'
      ? await fetch(base + '/v1/chat/completions', {
        method: 'POST', headers: { ...headers, authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: H }] }),
      })
      : await fetch(base + '/v1/messages', {
        method: 'POST', headers: { ...headers, 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: H }] }),
      });
    return { id, process, model: format === 'chat' ? 'gpt-4o-mini' : 'claude-haiku-4-5', status: res.status, headers: res.headers, body: await res.text() };
  }

  const run = randomUUID().slice(0, 8);
  const waves: Sent[][] = [];
  const firstWave = Date.now();
  const records = () => admin(a.url, 'GET', '/admin/usage?key=capped&limit=500').then((r) => r.body.records as any[]);
  for (let w = 0; w < WAVES; w++) {
    // Alternate processes and formats: A chat, B chat, A messages, B messages, ...
    const wave = await Promise.all(Array.from({ length: WAVE }, (_, i) =>
      send(i % 2 ? 'B' : 'A', (i >> 1) % 2 ? 'messages' : 'chat', `two-${run}-${w}-${i}`)));
    waves.push(wave);
    // Settlement releases the leases; wait for it so the next wave meets free slots.
    const admitted = waves.flat().filter((s) => s.status === 200).length;
    await eventually(records, (rs) => rs.length >= admitted, 5000);
  }
  const sent = waves.flat();
  const admitted = sent.filter((s) => s.status === 200);
  const refused = sent.filter((s) => s.status !== 200);

  t.test('the upstream never had more than 2 of the key\'s requests in flight, across both processes', async (t) => {
    t.equal(maxInFlight, CONCURRENCY, `at most ${CONCURRENCY} in flight upstream (and the limit was reached)`);
    t.equal(sim.requests.length, admitted.length, 'only admitted requests reached the upstream');
  });

  t.test('per wave: 2 admitted while slots last, then none once rpm is used up; the rest refused by the gateway', async (t) => {
    t.same(waves.map((w) => w.filter((s) => s.status === 200).length), [2, 2, 2, 0], 'admitted per wave');
    t.equal(admitted.length, RPM, `${RPM} admitted in the minute: the rpm limit, in total`);
    t.equal(refused.length, WAVES * WAVE - RPM);
    for (const [w, wave] of waves.entries()) {
      for (const s of wave.filter((x) => x.status !== 200)) {
        const reason = w < 3 ? 'concurrency' : 'rpm';
        const code = w < 3 ? 'API_KEY_CONCURRENCY_EXCEEDED' : 'API_KEY_RPM_EXCEEDED';
        t.equal(s.status, 429, `${s.id}: 429`);
        t.equal(s.headers.get('x-gateway-limit'), reason, `${s.id}: x-gateway-limit ${reason}`);
        const body = JSON.parse(s.body);
        t.equal(body.error.code, code, `${s.id}: ${code} in the ${s.model === 'gpt-4o-mini' ? 'OpenAI' : 'Anthropic'} envelope`);
        if (s.model === 'claude-haiku-4-5') t.equal(body.type, 'error');
        const retry = Number(s.headers.get('retry-after'));
        if (reason === 'concurrency') t.equal(retry, 1, `${s.id}: retry-after 1`);
        // The oldest admission (wave 1) leaves the rpm minute 60 s after it was made.
      else t.ok(retry <= 60 && retry >= 60 - Math.ceil((Date.now() - firstWave) / 1000), `${s.id}: retry-after ${retry} s, when the oldest admission leaves the minute`);
        t.equal(s.headers.get('x-should-retry'), null, 'waiting helps');
      }
    }
    for (const s of admitted) t.match(s.body, s.model === 'gpt-4o-mini' ? /data: \[DONE\]\n\n$/ : /event: message_stop\n/, `${s.id}: the whole stream`);
    t.comment(`two processes: ${sent.length} requests, ${admitted.length} admitted (A ${admitted.filter((s) => s.process === 'A').length}, B ${admitted.filter((s) => s.process === 'B').length}), `
      + `${refused.filter((s) => s.headers.get('x-gateway-limit') === 'concurrency').length} refused by concurrency, ${refused.filter((s) => s.headers.get('x-gateway-limit') === 'rpm').length} by rpm, max in flight upstream ${maxInFlight}`);
  });

  t.test('the ledger, read from either process, is exactly the admitted requests', async (t) => {
    const fromA = await records();
    const fromB = (await admin(b.url, 'GET', '/admin/usage?key=capped&limit=500')).body.records;
    t.same(fromA.map((r) => r.client_request_id).sort(), admitted.map((s) => s.id).sort(), 'one record per admitted request, none for a refused one');
    t.same(fromB, fromA, 'both processes read the same ledger');
    for (const s of admitted) {
      const r = fromA.find((x) => x.client_request_id === s.id);
      t.match(r, { key_id: 'capped', model: s.model, stream: true, status: 200, ending: 'completed', input_tokens: INPUT, output_tokens: OUTPUT }, s.id);
      t.ok(Math.abs(r.cost - costOf(s.model)) <= 1e-9, `${s.id}: cost`);
    }
    const nano = admitted.reduce((n, s) => n + Math.round(costOf(s.model) * 1e9), 0);
    for (const [name, url] of [['A', a.url], ['B', b.url]]) {
      const usage = await (await fetch(url + '/v1/usage', { headers: { authorization: `Bearer ${KEY}` } })).json() as any;
      t.match(usage.usage.total, { requests: RPM, input_tokens: RPM * INPUT, output_tokens: RPM * OUTPUT, total_tokens: RPM * (INPUT + OUTPUT) }, `${name}: totals`);
      t.ok(Math.abs(usage.usage.total.cost - nano / 1e9) <= 1e-9, `${name}: total cost ${usage.usage.total.cost}`);
      t.equal(usage.daily_usage.reduce((n: number, d: any) => n + d.requests, 0), RPM, `${name}: daily`);
      for (const m of usage.model_stats) t.equal(m.requests, admitted.filter((s) => s.model === m.model).length, `${name}: ${m.model}`);
    }
    t.comment(`ledger: ${fromA.length} records, ${RPM * INPUT} input + ${RPM * OUTPUT} output tokens, cost ${(nano / 1e9).toFixed(9)} USD`);
  });
});
