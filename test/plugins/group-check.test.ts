// Stage `group-check`: dedicated pools on their own routes only, for keys that list them; a platform must serve the route format.
import t from 'tap';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, expectOpenAIError, post } from '../helpers/http.ts';

// carol belongs to the dedicated group but does not list it in pools; erin belongs to it and lists it.
const config = demoConfig().replace('keys:\n', `keys:
  - { id: carol, key: sk-carol-0005, group: pool-a }
  - { id: erin, key: sk-erin-0006, group: pool-a, pools: [pool-a] }
`);
const gw = await withGateway(t, config);
const sim = gw.simulators.sim;
const CHAT = gw.url + '/v1/chat/completions';
const POOL = gw.url + '/pool/v1/chat/completions';

t.test('a pool route serves a key that lists the pool, with the pool account\'s credential', async (t) => {
  sim.clear();
  // The pool group allows "*", so a model the ordinary group would refuse goes through.
  const res = await post(POOL, chatBody('pool-only-model'), bearer('sk-alice-0001'));
  t.equal(res.status, 200);
  const body = await res.json() as { model: string; choices: Array<{ message: { content: string } }> };
  t.equal(body.model, 'pool-only-model');
  t.equal(body.choices[0].message.content, 'Echo: Hello there, world!');
  t.equal(sim.requests.length, 1);
  t.equal(sim.requests[0].path, '/v1/chat/completions', 'upstream_path of the pool route');
  t.equal(sim.requests[0].headers.authorization, 'Bearer pool-credential-1', 'the pool account, not the key\'s own group');

  const own = await post(POOL, chatBody(), bearer('sk-erin-0006'));
  t.equal(own.status, 200, 'a key of the pool group that lists it is served too');
  t.equal(sim.requests[1].headers.authorization, 'Bearer pool-credential-1');
});

t.test('the same key on an ordinary route uses its own group', async (t) => {
  sim.clear();
  const res = await post(CHAT, chatBody(), bearer('sk-alice-0001'));
  t.equal(res.status, 200);
  t.equal(sim.requests[0].headers.authorization, 'Bearer upstream-credential-1');
  await expectOpenAIError(t, await post(CHAT, chatBody('pool-only-model'), bearer('sk-alice-0001')), 404, 'model_not_found', 'invalid_request_error');
});

t.test('a key that does not list the pool is refused 403 on the pool route', async (t) => {
  sim.clear();
  const bob = await expectOpenAIError(t, await post(POOL, chatBody(), bearer('sk-bob-0002')), 403, 'POOL_NOT_ALLOWED', 'permission_error');
  t.equal(bob.message, 'This API key may not use the dedicated pool "pool-a"');
  // Belonging to the pool group is not enough: the key must list the pool.
  await expectOpenAIError(t, await post(POOL, chatBody(), bearer('sk-carol-0005')), 403, 'POOL_NOT_ALLOWED', 'permission_error');
  t.equal(sim.requests.length, 0);
});

t.test('a key whose group is dedicated is refused on ordinary routes', async (t) => {
  sim.clear();
  for (const key of ['sk-carol-0005', 'sk-erin-0006']) {
    const err = await expectOpenAIError(t, await post(CHAT, chatBody(), bearer(key)), 403, 'GROUP_DEDICATED', 'permission_error');
    t.equal(err.message, 'Group "pool-a" is dedicated and is served only on its own entry points');
    await expectOpenAIError(t, await post(gw.url + '/chat/completions', chatBody(), bearer(key)), 403, 'GROUP_DEDICATED', 'permission_error');
    await expectOpenAIError(t, await fetch(gw.url + '/v1/models', { headers: bearer(key) }), 403, 'GROUP_DEDICATED', 'permission_error');
  }
  t.equal(sim.requests.length, 0);
});

// A format reaches a group natively or translated; it does not when the group's client_formats leave it out, or when
// the platform speaks no format with a codec to translate into (images only).
for (const [what, platform, group] of [
  ['client_formats leave the format out', 'format: openai-responses', 'client_formats: [openai-responses]'],
  ['the platform speaks no format a request can be translated into', 'format: openai-images', ''],
] as const) {
  t.test(`${what} → 400 FORMAT_NOT_SUPPORTED naming the platform, nothing sent`, async (t) => {
    const mismatch = demoConfig().replace('platforms:\n', `platforms:\n  elsewhere: { base_url: "http://127.0.0.1:1", ${platform} }\n`)
      .replace('groups:\n', `groups:\n  foreign:\n    platform: elsewhere\n    ${group}\n    models: [gpt-4o-mini]\n    accounts: [ { id: f-1, credential: foreign-credential } ]\n`)
      .replace('keys:\n', 'keys:\n  - { id: frank, key: sk-frank-0007, group: foreign }\n');
    const gw2 = await withGateway(t, mismatch);
    const err = await expectOpenAIError(t, await post(gw2.url + '/v1/chat/completions', chatBody(), bearer('sk-frank-0007')), 400, 'FORMAT_NOT_SUPPORTED', 'invalid_request_error');
    t.match(err.message, '"elsewhere"', 'the message names the group\'s platform');
  });
}
