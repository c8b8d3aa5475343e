// Issue 38, items 7 and 8: stored Responses objects on a native group, through the default pipelines and routes.
// Item 7: reading one (GET /v1/responses/{id}) counts against the key's rpm and concurrency, is never billed, and is
// refused for a disabled or expired key. Item 8: an id belongs to the key it was relayed to; another key's GET, cancel
// or previous_response_id gets a 404 before anything goes upstream, on the file store (across a restart) and on Redis
// (across two gateway processes).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startGateway, type Gateway } from '../../app/gateway.ts';
import { startSimulator, type Simulator } from '../../simulator/server.ts';
import { admin, eventually } from '../admin/helpers.ts';
import { gatewayProcess } from '../helpers/process.ts';
import { bearer, post } from '../helpers/http.ts';
import { redisForTest } from '../store/redis-server.ts';

const ADMIN = 'stored-responses-admin-0123456789abcdef';
const KEYS = { alice: 'sk-alice-stored', bob: 'sk-bob-stored', reader: 'sk-reader-stored', slow: 'sk-slow-stored' };

// Three gateway processes and a restart: more than the usual minute on a busy machine.
t.setTimeout(180_000);

/**
 * The default pipelines and routes (the Responses routes, the admin API's key and usage routes among them) on one
 * OpenAI-format group whose one account is `sim`, kept in `store`. JSON is YAML: written as is.
 */
function config(sim: Simulator, store: Record<string, string>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gw-stored-')), 'gateway.yaml');
  writeFileSync(file, JSON.stringify({
    server: { host: '127.0.0.1', port: 0 },
    store,
    admin: { token: ADMIN },
    platforms: { openai: { base_url: sim.url, auth: 'bearer', format: ['openai-responses'], forward_headers: ['x-simulator-*'] } },
    groups: { main: { platform: 'openai', models: ['gpt-5*'], accounts: [{ id: 'acct-1', credential: 'credential-1' }] } },
    keys: [
      { id: 'alice', key: KEYS.alice, group: 'main' },
      { id: 'bob', key: KEYS.bob, group: 'main' },
      { id: 'reader', key: KEYS.reader, group: 'main', limits: { rpm: 10, quota_usd: 0.000001 } },
      { id: 'slow', key: KEYS.slow, group: 'main', limits: { concurrency: 1 } },
    ],
    pricing: { 'gpt-5*': { input: 1.25, output: 10 } },
  }));
  return file;
}

async function simulator(t: Test): Promise<Simulator> {
  const sim = await startSimulator();
  t.teardown(() => sim.close());
  return sim;
}

/** Gateways in this process, each closed once when the test ends (or earlier, by `close`). */
function gateways(t: Test) {
  const open = new Set<Gateway>();
  t.teardown(() => Promise.all([...open].map((g) => g.close())));
  return {
    start: async (file: string) => {
      const g = await startGateway({ configFile: file, host: '127.0.0.1', port: 0, env: {}, log: pino({ level: 'silent' }) });
      open.add(g);
      return g;
    },
    close: async (g: Gateway) => { open.delete(g); await g.close(); },
  };
}

const create = async (url: string, key: string, extra: Record<string, unknown> = {}) => {
  const res = await post(`${url}/v1/responses`, { model: 'gpt-5', input: 'Remember the number 7', ...extra }, bearer(key));
  const text = await res.text();
  if (res.status !== 200) throw new Error(`create: ${res.status} ${text}`);
  if (!extra.stream) return (JSON.parse(text) as { id: string }).id;
  return (JSON.parse(/event: response\.created\ndata: (.*)\n/.exec(text)![1]) as { response: { id: string } }).response.id;
};
const read = (url: string, key: string, id: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/responses/${id}`, { headers: { ...bearer(key), ...headers } });

/** Every way a key reaches a stored response: read it, cancel it, continue it. */
async function reach(url: string, key: string, id: string) {
  const got = await read(url, key, id);
  const cancelled = await post(`${url}/v1/responses/${id}/cancel`, {}, bearer(key));
  const continued = await post(`${url}/v1/responses`, { model: 'gpt-5', input: 'Which number?', previous_response_id: id }, bearer(key));
  return { got: { status: got.status, body: await got.json() }, cancelled: { status: cancelled.status, body: await cancelled.json() }, continued: { status: continued.status, body: await continued.json() } };
}

/** Another key reaches none of them, in OpenAI's own 404, and nothing goes upstream. */
async function refused(t: Test, sim: Simulator, url: string, id: string) {
  const before = sim.requests.length;
  const r = await reach(url, KEYS.bob, id);
  t.same([r.got.status, r.cancelled.status, r.continued.status], [404, 404, 404], `another key: GET, cancel and previous_response_id of ${id} are 404`);
  t.same(r.got.body, { error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: 'response_not_found' } });
  t.equal(r.cancelled.body.error.code, 'response_not_found');
  t.same(r.continued.body, { error: { message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } });
  t.equal(sim.requests.length, before, 'nothing went upstream');
}

/** Its owner reaches it (the simulator has no cancel endpoint: its own 404 says the cancel went upstream). */
async function owned(t: Test, sim: Simulator, url: string, id: string) {
  const r = await reach(url, KEYS.alice, id);
  t.equal(r.got.status, 200, `the owner reads ${id}`);
  t.equal(r.got.body.id, id);
  t.equal(sim.requests.at(-2)!.path, `/v1/responses/${id}/cancel`, 'the owner\'s cancel went upstream');
  t.equal(r.continued.status, 200, 'the owner continues it');
}

t.test('item 8, file store: an id is its key\'s, across a restart', async (t) => {
  const sim = await simulator(t);
  const file = config(sim, { path: join(mkdtempSync(join(tmpdir(), 'gw-stored-db-')), 'gateway.db') });
  const gw = gateways(t);
  let g = await gw.start(file);
  const whole = await create(g.url, KEYS.alice);
  const streamed = await create(g.url, KEYS.alice, { stream: true });
  for (const id of [whole, streamed]) await refused(t, sim, g.url, id);
  await owned(t, sim, g.url, whole);
  const notAnId = await post(`${g.url}/v1/responses/compact`, { model: 'gpt-5', input: 'hi' }, bearer(KEYS.bob));
  t.equal(sim.requests.at(-1)!.path, '/v1/responses/compact', 'compact is an operation, not an id: it goes upstream');
  t.equal(notAnId.status, 404, '(the simulator has no compact endpoint)');

  await gw.close(g);
  g = await gw.start(file);
  for (const id of [whole, streamed]) await refused(t, sim, g.url, id);
  await owned(t, sim, g.url, streamed);
});

t.test('item 8, Redis: an id is its key\'s, across two gateway processes', async (t) => {
  const { url: redis, prefix } = await redisForTest(t, 'stored');
  const sim = await simulator(t);
  const file = config(sim, { redis, prefix });
  const [a, b] = await Promise.all([gatewayProcess(t, file), gatewayProcess(t, file)]);
  const whole = await create(a.url, KEYS.alice);
  const streamed = await create(a.url, KEYS.alice, { stream: true });
  for (const id of [whole, streamed]) await refused(t, sim, b.url, id);
  await owned(t, sim, b.url, whole);
  await owned(t, sim, b.url, streamed);
  await refused(t, sim, a.url, whole);
});

/** Item 7 on one store: reads count against rpm and concurrency, are never billed, and need a live key. */
async function reads(t: Test, store: (t: Test) => Promise<Record<string, string>>) {
  const sim = await simulator(t);
  const gw = gateways(t);
  const g = await gw.start(config(sim, await store(t)));

  // rpm 10 and a quota the first answer uses up: 9 of 25 reads get through, the rest are refused by rpm.
  const id = await create(g.url, KEYS.reader);
  const statuses: number[] = [];
  let refusal: unknown;
  for (let i = 0; i < 25; i++) {
    const res = await read(g.url, KEYS.reader, id);
    statuses.push(res.status);
    const body = await res.json();
    if (res.status === 429) refusal ??= body;
  }
  t.equal(statuses.filter((s) => s === 200).length, 9, '9 reads after the create fill the rpm of 10');
  t.equal(statuses.filter((s) => s === 429).length, 16, 'the other 16 are refused');
  t.match(refusal, { error: { code: 'API_KEY_RPM_EXCEEDED', type: 'rate_limit_error' } }, 'by rpm, in OpenAI\'s envelope');
  const spent = await post(`${g.url}/v1/responses`, { model: 'gpt-5', input: 'More' }, bearer(KEYS.reader));
  t.match(await spent.json(), { error: { code: 'API_KEY_QUOTA_EXHAUSTED' } }, 'the quota is used up, which reads do not need');
  const records = await eventually(async () => (await admin(g.url, 'GET', '/admin/usage?key=reader&limit=100', undefined, ADMIN)).body.records as { route: string; cost: number }[], (r) => r.length >= 1);
  t.same(records.map((r) => r.route), ['/v1/responses'], 'only the create is billed');

  // concurrency 1: of three slow reads at once, one is served.
  const mine = await create(g.url, KEYS.slow);
  const slow = await Promise.all([0, 1, 2].map(() => read(g.url, KEYS.slow, mine, { 'x-simulator-fault': 'slow-headers=400' })
    .then(async (res) => ({ status: res.status, code: res.status === 200 ? undefined : (await res.json()).error.code }))));
  t.same(slow.map((s) => s.status).sort(), [200, 429, 429], 'one read in flight at a time');
  t.ok(slow.filter((s) => s.status === 429).every((s) => s.code === 'API_KEY_CONCURRENCY_EXCEEDED'), 'the others refused by concurrency');

  // An issued key's read is refused once it is disabled, and once it has expired.
  const issued = (await admin(g.url, 'POST', '/admin/keys', { group: 'main', name: 'reads' }, ADMIN)).body as { key: string; record: { id: string } };
  const theirs = await create(g.url, issued.key);
  t.equal((await read(g.url, issued.key, theirs)).status, 200, 'a live key reads its response');
  t.equal((await admin(g.url, 'PATCH', `/admin/keys/${issued.record.id}`, { disabled: true }, ADMIN)).status, 200);
  const disabled = await eventually(() => read(g.url, issued.key, theirs), (r) => r.status !== 200, 15_000);
  t.equal(disabled.status, 401);
  t.match(await disabled.json(), { error: { code: 'API_KEY_DISABLED' } }, 'disabled: refused');
  await admin(g.url, 'PATCH', `/admin/keys/${issued.record.id}`, { disabled: false, expires_at: '2020-01-01T00:00:00Z' }, ADMIN);
  const expired = await eventually(() => read(g.url, issued.key, theirs), (r) => r.status !== 401, 15_000);
  t.equal(expired.status, 403);
  t.match(await expired.json(), { error: { code: 'API_KEY_EXPIRED' } }, 'expired: refused');
}

t.test('item 7, file store: reading a stored response counts against rpm and concurrency', (t) =>
  reads(t, async () => ({ path: join(mkdtempSync(join(tmpdir(), 'gw-reads-db-')), 'gateway.db') })));

t.test('item 7, Redis: reading a stored response counts against rpm and concurrency', (t) =>
  reads(t, async (t) => {
    const { url, prefix } = await redisForTest(t, 'reads');
    return { redis: url, prefix };
  }));
