// Stage `list-models`: the OpenAI list shape, exactly the models a key may use, answered by the gateway itself.
import t from 'tap';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, expectOpenAIError } from '../helpers/http.ts';

const config = demoConfig(`  - { method: GET, path: "/v1/models/{model}", format: openai-chat, pipeline: models }
  - { method: GET, path: /pool/v1/models, format: openai-chat, pipeline: models, pool: pool-a }
`).replace('keys:\n', `keys:
  - { id: dave, key: sk-dave-0008, group: main, models: ["gpt-5*"] }
  - { id: gina, key: sk-gina-0009, group: main, models: ["gpt-4o*"] }
  - { id: carol, key: sk-carol-0005, group: pool-a }
`);
const gw = await withGateway(t, config);
const sim = gw.simulators.sim;

const list = (key: string, path = '/v1/models') => fetch(gw.url + path, { headers: bearer(key) });
const model = (id: string) => ({ id, object: 'model', created: 1704067200, owned_by: 'sim' });

t.test('the OpenAI list shape with the group\'s concrete models and aliases, sorted', async (t) => {
  sim.clear();
  const res = await list('sk-alice-0001');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  const text = await res.text();
  t.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
  // gpt-5* is a glob: it allows models but names none, so it is not listed.
  t.same(JSON.parse(text), { object: 'list', data: [model('gpt-4o'), model('gpt-4o-mini')] });
  t.equal(sim.requests.length, 0, 'answered without asking the upstream');
});

t.test('a key\'s own models narrow the list', async (t) => {
  t.same((await (await list('sk-bob-0002')).json() as { data: unknown[] }).data, [model('gpt-4o-mini')]);
  t.same((await (await list('sk-gina-0009')).json() as { data: unknown[] }).data, [model('gpt-4o'), model('gpt-4o-mini')], 'a key glob keeps what it matches');
  t.same(await (await list('sk-dave-0008')).json(), { object: 'list', data: [] }, 'nothing listable matches gpt-5*');
});

t.test('one model by id', async (t) => {
  const one = await list('sk-alice-0001', '/v1/models/gpt-4o');
  t.equal(one.status, 200);
  t.same(await one.json(), model('gpt-4o'));
  t.same(await (await list('sk-bob-0002', '/v1/models/gpt-4o-mini')).json(), model('gpt-4o-mini'));
  const err = await expectOpenAIError(t, await list('sk-bob-0002', '/v1/models/gpt-4o'), 404, 'model_not_found', 'invalid_request_error');
  t.equal(err.message, 'The model "gpt-4o" does not exist or this API key may not use it');
  await expectOpenAIError(t, await list('sk-alice-0001', '/v1/models/gpt-3.5-turbo'), 404, 'model_not_found', 'invalid_request_error');
  const glob = await list('sk-alice-0001', '/v1/models/gpt-5-mini');
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
  // The pool allows "*", which names no model.
  t.same(await (await list('sk-alice-0001', '/pool/v1/models')).json(), { object: 'list', data: [] });
  await expectOpenAIError(t, await list('sk-bob-0002', '/pool/v1/models'), 403, 'POOL_NOT_ALLOWED', 'permission_error');
});
