// Stage `model-allowlist`: group globs, key-level narrowing, model_map aliases, and refusals that never reach the upstream.
import t, { type Test } from 'tap';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, expectOpenAIError, post } from '../helpers/http.ts';

// "o3.pro" checks that a dot in an allow-list entry is literal; dave narrows his key with a glob of his own.
const config = demoConfig(
  '  - { method: POST, path: /custom/v1/chat/completions, format: openai-chat, pipeline: [auth, group-check, { model-allowlist: { list_endpoint: /custom/models } }, proxy], upstream_path: /v1/chat/completions }\n',
).replace('models: [gpt-4o-mini, "gpt-5*"]', 'models: [gpt-4o-mini, "gpt-5*", o3.pro]')
  .replace('model_map: { gpt-4o: gpt-4o-mini }', 'model_map: { gpt-4o: gpt-4o-mini, "legacy-*": gpt-4o-mini, "legacy-big-*": gpt-5, "gpt-5-old": gpt-5 }')
  .replace('keys:\n', 'keys:\n  - { id: dave, key: sk-dave-0008, group: main, models: ["gpt-5*"] }\n');
const gw = await withGateway(t, config);
const sim = gw.simulators.sim;
const CHAT = gw.url + '/v1/chat/completions';
const ALICE = bearer('sk-alice-0001');

async function allowed(t: Test, model: string, key = ALICE) {
  const before = sim.requests.length;
  const res = await post(CHAT, chatBody(model), key);
  t.equal(res.status, 200, `${model} is allowed`);
  t.equal((await res.json() as { model: string }).model, model, `${model}: the client sees the model it asked for`);
  t.equal(sim.requests.length, before + 1);
  return sim.requests[sim.requests.length - 1].json as { model: string };
}

async function refused(t: Test, model: string, key = ALICE) {
  const before = sim.requests.length;
  const err = await expectOpenAIError(t, await post(CHAT, chatBody(model), key), 404, 'model_not_found', 'invalid_request_error');
  t.equal(err.param, 'model');
  t.equal(sim.requests.length, before, `${model}: refused before the upstream`);
  return err;
}

t.test('group globs: gpt-5* allows the gpt-5 family and nothing else', async (t) => {
  t.equal((await allowed(t, 'gpt-5-mini')).model, 'gpt-5-mini', 'the upstream gets the model unchanged');
  await allowed(t, 'gpt-5');
  await allowed(t, 'gpt-4o-mini');
  await refused(t, 'xgpt-5', ALICE);
  await refused(t, 'gpt-4o-mini-2024-07-18', ALICE);
  await refused(t, 'gpt-4', ALICE);
});

t.test('allow-list entries are matched literally apart from * and ?', async (t) => {
  await allowed(t, 'o3.pro');
  await refused(t, 'o3xpro');
  await refused(t, 'o3.pro2');
});

t.test('a key\'s own models narrow the group\'s', async (t) => {
  await allowed(t, 'gpt-4o-mini', bearer('sk-bob-0002'));
  await refused(t, 'gpt-5-mini', bearer('sk-bob-0002'));
  await refused(t, 'gpt-4o', bearer('sk-bob-0002'));
  await allowed(t, 'gpt-5-mini', bearer('sk-dave-0008'));
  await refused(t, 'gpt-4o-mini', bearer('sk-dave-0008'));
});

t.test('model_map: the alias is allowed, rewritten upstream and written back to the client', async (t) => {
  t.equal((await allowed(t, 'gpt-4o')).model, 'gpt-4o-mini');
});

t.test('model_map glob keys: an exact key wins, else the first glob written that matches', async (t) => {
  t.equal((await allowed(t, 'legacy-small')).model, 'gpt-4o-mini', 'a name no list has, mapped by its glob');
  t.equal((await allowed(t, 'legacy-big-one')).model, 'gpt-4o-mini', 'the first matching glob in the order written');
  t.equal((await allowed(t, 'gpt-5-old')).model, 'gpt-5', 'an exact key');
  await refused(t, 'xlegacy-small');
});

t.test('the refusal message points at the model list endpoint', async (t) => {
  const err = await refused(t, 'gpt-3.5-turbo');
  t.equal(err.message, 'The model "gpt-3.5-turbo" does not exist or this API key may not use it. GET /v1/models lists the models you can use.');
  const custom = await expectOpenAIError(t, await post(gw.url + '/custom/v1/chat/completions', chatBody('gpt-3.5-turbo'), ALICE), 404, 'model_not_found', 'invalid_request_error');
  t.match(custom.message, 'GET /custom/models lists', 'list_endpoint option');
});

t.test('a missing or non-string model is a 400, never forwarded', async (t) => {
  sim.clear();
  const cases: Array<[string, unknown]> = [
    ['missing', { messages: [{ role: 'user', content: 'hi' }] }],
    ['number', chatBody(42 as unknown as string)],
    ['empty string', chatBody('')],
    ['null', { model: null, messages: [{ role: 'user', content: 'hi' }] }],
    ['array', { model: ['gpt-4o-mini'], messages: [{ role: 'user', content: 'hi' }] }],
    ['object', { model: { id: 'gpt-4o-mini' }, messages: [{ role: 'user', content: 'hi' }] }],
  ];
  for (const [what, body] of cases) {
    const err = await expectOpenAIError(t, await post(CHAT, body, ALICE), 400, 'model_required', 'invalid_request_error');
    t.equal(err.param, 'model', what);
    t.equal(err.message, 'The request must name a model (a non-empty string)', what);
  }
  t.equal(sim.requests.length, 0);
});

t.test('names inherited from Object.prototype are not aliases', async (t) => {
  sim.clear();
  for (const model of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
    const res = await post(CHAT, chatBody(model), ALICE);
    const body = await res.json() as { error?: { code?: string } };
    t.equal(res.status, 404, `${model} → 404`);
    t.equal(body.error?.code, 'model_not_found', `${model} → model_not_found`);
  }
  t.equal(sim.requests.length, 0, 'no request without a model name was forwarded');
});

t.test('a model name longer than 256 characters is refused before anything else: not echoed, logged or sent', async (t) => {
  await allowed(t, `gpt-5-${'x'.repeat(250)}`);
  const before = sim.requests.length;
  const long = `gpt-5-${'x'.repeat(251)}`;
  const err = await expectOpenAIError(t, await post(CHAT, chatBody(long), ALICE), 400, 'model_required', 'invalid_request_error');
  t.equal(err.param, 'model');
  t.match(String(err.message), /257 characters long; at most 256/);
  t.notOk(String(err.message).includes('xxxxxxxxxx'), 'the name is not echoed');
  t.equal(sim.requests.length, before, 'refused before the upstream');
  const huge = await post(CHAT, chatBody(`gpt-5-${'x'.repeat(60_000)}`), ALICE);
  t.equal(huge.status, 400);
  t.ok((await huge.text()).length < 1000, 'a name of 60,000 characters gets a short answer');
});
