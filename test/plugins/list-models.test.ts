// Stage `list-models`: each format's list shape with exactly the models a key may use through its group: concrete names,
// aliases and, for globs, what the upstream itself lists (asked through an account, cached, refreshed behind requests),
// or the priced names the globs match when the upstream cannot be asked.
import t from 'tap';
import { pino } from 'pino';
import { startGateway } from '../../app/gateway.ts';
import { demoConfig, withGateway, writeConfig } from '../helpers/gateway.ts';
import { freePort } from '../helpers/process.ts';
import { bearer, expectOpenAIError } from '../helpers/http.ts';

const config = demoConfig(`  - { method: GET, path: "/v1/models/{model}", format: openai-chat, pipeline: models }
  - { method: GET, path: /pool/v1/models, format: openai-chat, pipeline: models, pool: pool-a }
  - { method: GET, path: /v1beta/models, format: gemini, pipeline: models }
  - { method: GET, path: /openai-only/v1/models, format: openai-chat, pipeline: models, pool: openai-only }
  - { method: GET, path: /down/v1/models, format: openai-chat, pipeline: models, pool: down }
  - { method: GET, path: /anthropic-only/v1/models, format: openai-chat, pipeline: models, pool: anthropic-only }
  - { method: GET, path: /anthropic-strict/v1/models, format: openai-chat, pipeline: models, pool: anthropic-strict }
  - { method: GET, path: /slow/v1/models, format: openai-chat, pipeline: [auth, group-check, { list-models: { ttl_ms: 2000, first_wait_ms: 100 } }], pool: slow }
`).replace('  models: [auth, group-check, list-models]', `  models: [auth, { group-check: { format: false } }, { list-models: { shape_by_header: { anthropic-version: anthropic-messages } } }]`)
  .replace('pipelines:\n  relay', `pricing:
  gpt-5-nano: { input: 0.05, output: 0.4 }
  gpt-4o-mini: { input: 0.15, output: 0.6 }
  "gpt-5*": { input: 1.25, output: 10 }
  claude-sonnet-4-5: { input: 3, output: 15 }
pipelines:
  relay`).replace('  sim: { simulator: true }\n', `  sim: { simulator: true }
  openai-sim: { simulator: true, format: [openai-chat, openai-responses] }
  down-sim: { simulator: true, format: openai-chat }
  anthropic-sim: { simulator: true, format: anthropic-messages }
  slow-sim: { simulator: true, format: openai-chat }
`).replace('keys:\n', `  mixed:
    platform: sim
    models: ["gpt-5*", "claude-*", "gemini-2.5*", claude-sonnet-4-5, gemini-2.5-pro, my-finetune]
    model_map: { sonnet: claude-sonnet-4-5 }
    accounts:
      - { id: mixed-1, credential: mixed-credential }
  openai-only:
    platform: openai-sim
    dedicated: true
    models: ["gpt-*"]
    accounts:
      - { id: oo-2, credential: sim-bad-credential, priority: 2 }
      - { id: oo-1, credential: openai-only-credential, priority: 1 }
  down:
    platform: down-sim
    dedicated: true
    models: ["gpt-5*", claude-sonnet-4-5]
    accounts:
      - { id: down-1, credential: "sim-fault:status=503" }
  anthropic-only:
    platform: anthropic-sim
    dedicated: true
    models: ["claude-*"]
    accounts:
      - { id: ao-1, credential: anthropic-only-credential }
  anthropic-strict:
    platform: anthropic-sim
    dedicated: true
    client_formats: [anthropic-messages]
    models: ["claude-*"]
    accounts:
      - { id: as-1, credential: anthropic-only-credential }
  slow:
    platform: slow-sim
    dedicated: true
    models: ["gpt-5*"]
    accounts:
      - { id: slow-1, credential: "sim-fault:slow-headers=600" }
keys:
  - { id: dave, key: sk-dave-0008, group: main, models: ["gpt-5*"] }
  - { id: gina, key: sk-gina-0009, group: main, models: ["gpt-4o*"] }
  - { id: carol, key: sk-carol-0005, group: pool-a }
  - { id: erin, key: sk-erin-0010, group: mixed }
  - { id: fred, key: sk-fred-0011, group: mixed, models: ["claude-haiku*", sonnet], pools: [anthropic-only] }
  - { id: pooler, key: sk-pooler-0012, group: main, pools: [openai-only, down, anthropic-only, anthropic-strict, slow] }
`);
const gw = await withGateway(t, config);
const sim = gw.simulators.sim;

const list = (key: string, path = '/v1/models', headers: Record<string, string> = {}) => fetch(gw.url + path, { headers: { ...bearer(key), ...headers } });
const ids = async (res: Response | Promise<Response>): Promise<string[]> => {
  const body = await (await res).json() as { data?: { id: string }[]; models?: { name: string }[] };
  return body.data ? body.data.map((m) => m.id) : body.models!.map((m) => m.name.replace(/^models\//, ''));
};
const model = (id: string) => ({ id, object: 'model', created: 1704067200, owned_by: 'sim' });
/** Model-list asks a simulator received (path with query), in order. */
const asks = (s = sim) => s.requests.filter((r) => r.method === 'GET' && /^\/v1(beta)?\/models/.test(r.path));
const ANTHROPIC = { 'anthropic-version': '2023-06-01' };

t.test('the OpenAI list: concrete models, aliases, and what the upstream lists that the glob matches, sorted', async (t) => {
  const res = await list('sk-alice-0001');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const text = await res.text();
  t.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
  // gpt-5* matches the simulator's gpt-5 and gpt-5-mini; gpt-4o is the alias of gpt-4o-mini.
  t.same(JSON.parse(text), { object: 'list', data: ['gpt-4o', 'gpt-4o-mini', 'gpt-5', 'gpt-5-mini'].map(model) });
  // The simulator serves every vendor: each vendor's own list is asked once, so a name is shown to its own vendor's clients.
  t.same(asks().map((r) => r.path).sort(), ['/v1/models', '/v1/models?limit=1000', '/v1beta/models?pageSize=1000']);
  for (const r of asks()) {
    const credential = r.headers.authorization ?? r.headers['x-api-key'] ?? r.headers['x-goog-api-key'];
    t.match(credential, /upstream-credential-1$/, `${r.path}: the account's credential, in the vendor's own header`);
    t.notOk(JSON.stringify(r.headers).includes('sk-alice'), 'never the client key');
  }
  t.equal(asks().find((r) => r.path === '/v1/models?limit=1000')?.headers['anthropic-version'], '2023-06-01');
});

t.test('warm lists are answered from the cache: no upstream call on the request path', async (t) => {
  const before = asks().length;
  for (let i = 0; i < 5; i++) t.equal((await ids(list('sk-alice-0001'))).length, 4);
  t.equal(asks().length, before, 'no model-list ask while the lists are fresh');
});

t.test('a key\'s own models narrow the list', async (t) => {
  t.same(await ids(list('sk-bob-0002')), ['gpt-4o-mini']);
  t.same(await ids(list('sk-gina-0009')), ['gpt-4o', 'gpt-4o-mini'], 'a key glob keeps what it matches');
  t.same(await ids(list('sk-dave-0008')), ['gpt-5', 'gpt-5-mini'], 'the upstream\'s gpt-5 models, through the key\'s own glob');
});

t.test('each vendor\'s list shows its own models when one platform serves several vendors', async (t) => {
  t.same(await ids(list('sk-erin-0010')), ['gpt-5', 'gpt-5-mini', 'my-finetune'], 'OpenAI: its list, and the concrete name no vendor lists');
  t.same(await ids(list('sk-erin-0010', '/v1/models', ANTHROPIC)), ['claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4-5', 'my-finetune', 'sonnet'],
    'Anthropic: its list (with the concrete claude-sonnet-4-5), the alias of one of its models, the name no vendor lists');
  t.same(await ids(list('sk-erin-0010', '/v1beta/models')), ['gemini-2.5-flash', 'gemini-2.5-pro', 'my-finetune'], 'Gemini: not gemini-2.0-flash (outside the glob)');
  t.same(await ids(list('sk-fred-0011', '/v1/models', ANTHROPIC)), ['claude-haiku-4-5', 'sonnet'], 'narrowed by the key');
  t.same(await ids(list('sk-fred-0011')), [], 'nothing of OpenAI\'s is left to this key');
});

t.test('an account that fails is passed over for the next one', async (t) => {
  const oo = gw.simulators['openai-sim'];
  t.same(await ids(list('sk-pooler-0012', '/openai-only/v1/models')), ['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-mini', 'gpt-5', 'gpt-5-mini', 'gpt-image-1']);
  // Priority 1 first: it answers, so the account with the refused credential is never asked.
  t.same(asks(oo).map((r) => r.headers.authorization), ['Bearer openai-only-credential'], 'one ask: the platform serves one vendor');
});

t.test('an upstream that cannot be asked: the priced names its globs match', async (t) => {
  const down = gw.simulators['down-sim'];
  // Its one account answers 503: gpt-5-nano is the one concrete priced name gpt-5* matches (gpt-5* itself is a glob).
  t.same(await ids(list('sk-pooler-0012', '/down/v1/models')), ['claude-sonnet-4-5', 'gpt-5-nano']);
  t.same(asks(down).map((r) => r.headers.authorization), ['Bearer sim-fault:status=503'], 'asked once');
  t.same(await ids(list('sk-pooler-0012', '/down/v1/models')), ['claude-sonnet-4-5', 'gpt-5-nano']);
  t.equal(asks(down).length, 1, 'not asked again before retry_ms');
});

t.test('a format that does not reach the group lists nothing; its own vendor\'s format lists the upstream\'s', async (t) => {
  t.same(await ids(list('sk-pooler-0012', '/anthropic-strict/v1/models')), [], 'the OpenAI shape: the group accepts only Anthropic clients');
  t.same(await ids(list('sk-pooler-0012', '/anthropic-only/v1/models')), ['claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4-5'],
    'translated: an OpenAI client of an Anthropic-only platform sees the Claude models it can call');
  t.same(await ids(list('sk-pooler-0012', '/anthropic-only/v1/models', ANTHROPIC)), ['claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4-5']);
  t.same(await ids(list('sk-fred-0011', '/anthropic-only/v1/models', ANTHROPIC)), ['claude-haiku-4-5'], 'narrowed by the key');
  t.same(asks(gw.simulators['anthropic-sim']).map((r) => r.path), ['/v1/models?limit=1000']);
});

t.test('TTL: the first request waits a bounded time, later ones never wait, a stale list is refreshed behind a request', async (t) => {
  const slow = gw.simulators['slow-sim'];
  const timed = async () => {
    const began = performance.now();
    const listed = await ids(list('sk-pooler-0012', '/slow/v1/models'));
    return { listed, ms: Math.round(performance.now() - began) };
  };
  // The upstream takes 600 ms to answer; first_wait_ms is 100 and ttl_ms 2000.
  const cold = await timed();
  t.same(cold.listed, ['gpt-5-nano'], 'cold, past first_wait_ms: the priced names the glob matches');
  t.ok(cold.ms < 450, `cold: answered after ${cold.ms} ms, not after the upstream's 600`);
  t.equal(asks(slow).length, 1, 'one ask under way');
  await new Promise((r) => setTimeout(r, 800));
  for (let i = 0; i < 3; i++) {
    const warm = await timed();
    t.same(warm.listed, ['gpt-5', 'gpt-5-mini'], 'the upstream\'s list, once it answered');
    t.ok(warm.ms < 450, `warm: answered after ${warm.ms} ms`);
  }
  t.equal(asks(slow).length, 1, 'still the one ask');
  await new Promise((r) => setTimeout(r, 1400));
  const stale = await timed();
  t.same(stale.listed, ['gpt-5', 'gpt-5-mini'], 'past the TTL: the list it had');
  t.ok(stale.ms < 450, `stale: answered after ${stale.ms} ms, before the refresh (600 ms) could end`);
  await new Promise((r) => setTimeout(r, 150));
  t.equal(asks(slow).length, 2, 'the refresh was asked behind the request');
  await new Promise((r) => setTimeout(r, 700));
  t.same((await timed()).listed, ['gpt-5', 'gpt-5-mini']);
  t.equal(asks(slow).length, 2, 'and is fresh again');
});

t.test('one model by id', async (t) => {
  const one = await list('sk-alice-0001', '/v1/models/gpt-4o');
  t.equal(one.status, 200);
  t.same(await one.json(), model('gpt-4o'));
  t.same(await (await list('sk-bob-0002', '/v1/models/gpt-4o-mini')).json(), model('gpt-4o-mini'));
  const err = await expectOpenAIError(t, await list('sk-bob-0002', '/v1/models/gpt-4o'), 404, 'model_not_found', 'invalid_request_error');
  t.equal(err.message, 'The model "gpt-4o" does not exist or this API key may not use it');
  await expectOpenAIError(t, await list('sk-alice-0001', '/v1/models/gpt-3.5-turbo'), 404, 'model_not_found', 'invalid_request_error');
  const glob = await list('sk-alice-0001', '/v1/models/gpt-5-turbo');
  t.equal(glob.status, 200, 'a model the key may use through a glob can be retrieved');
});

t.test('refusals come from the stages before it', async (t) => {
  await expectOpenAIError(t, await fetch(gw.url + '/v1/models'), 401, 'API_KEY_REQUIRED', 'invalid_request_error');
  await expectOpenAIError(t, await list('sk-wrong'), 401, 'INVALID_API_KEY', 'invalid_request_error');
  await expectOpenAIError(t, await list('sk-carol-0005'), 403, 'GROUP_DEDICATED', 'permission_error');
  const post = await fetch(gw.url + '/v1/models', { method: 'POST', headers: bearer('sk-alice-0001') });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET');
});

t.test('a pool route lists the pool group', async (t) => {
  // The pool allows "*": every model each vendor lists.
  const pool = await ids(list('sk-alice-0001', '/pool/v1/models'));
  t.same(pool, ['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-mini', 'gpt-5', 'gpt-5-mini', 'gpt-image-1', 'text-embedding-3-small']);
  await expectOpenAIError(t, await list('sk-bob-0002', '/pool/v1/models'), 403, 'POOL_NOT_ALLOWED', 'permission_error');
});

t.test('an upstream that cannot be asked is logged once, with a cause and never a credential', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const closedPort = await freePort();
  const gateway = await startGateway({
    configFile: writeConfig(`
server: { host: 127.0.0.1, port: 0 }
platforms:
  closed: { base_url: "http://127.0.0.1:${closedPort}", format: openai-chat }
groups:
  g:
    platform: closed
    models: ["gpt-5*"]
    accounts: [{ id: a, credential: secret-upstream-credential }]
keys:
  - { id: k, key: sk-closed-0001, group: g }
pricing:
  gpt-5-nano: { input: 1 }
routes:
  - { method: GET, path: /v1/models, format: openai-chat, pipeline: [auth, group-check, { list-models: { retry_ms: 1000 } }] }
`),
    host: '127.0.0.1', port: 0, env: {}, log: pino({ level: 'warn' }, { write: (line: string) => { lines.push(JSON.parse(line)); } }),
  });
  t.teardown(() => gateway.close());
  for (let i = 0; i < 3; i++) t.same(await ids(fetch(gateway.url + '/v1/models', { headers: bearer('sk-closed-0001') })), ['gpt-5-nano']);
  const warned = lines.filter((l) => l.msg === 'the upstream model list could not be read: listing what is known');
  t.same(warned.map((l) => [l.group, l.list, l.reason]), [['g', '/v1/models', 'ECONNREFUSED']], 'once, with the socket error');
  t.notMatch(JSON.stringify(lines), /secret-upstream-credential|sk-closed/);
});
