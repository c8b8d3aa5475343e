// Stage `auth`: where the key is read from and in which order, query keys, key states, and the admin token on model routes.
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, expectOpenAIError, post } from '../helpers/http.ts';
import { knownDigests } from '../../plugins/auth.ts';

const HASHED = 'sk-hashed-0006';
const sha = createHash('sha256').update(HASHED).digest('hex');
// A Gemini-style /v1beta route where ?key= is accepted, relayed to the simulator's chat endpoint.
const config = demoConfig(`  - { method: POST, path: /v1beta/chat, format: openai-chat, pipeline: relay, upstream_path: /v1/chat/completions }\n`)
  .replace('keys:\n', `keys:\n  - { id: hashed, key_sha256: "${sha}", group: main }\n`);

const gw = await withGateway(t, config);
const sim = gw.simulators.sim;
const CHAT = gw.url + '/v1/chat/completions';

const ok = async (t: Test, res: Response, what: string) => {
  t.equal(res.status, 200, what);
  const body = await res.json() as { choices: Array<{ message: { content: string } }> };
  t.equal(body.choices[0].message.content, 'Echo: Hello there, world!', `${what}: the simulator answered`);
};

t.test('each header form is accepted on its own', async (t) => {
  await ok(t, await post(CHAT, chatBody(), bearer('sk-alice-0001')), 'Authorization: Bearer');
  await ok(t, await post(CHAT, chatBody(), { authorization: 'bearer sk-alice-0001' }), 'lower-case scheme');
  await ok(t, await post(CHAT, chatBody(), { 'x-api-key': 'sk-alice-0001' }), 'x-api-key');
  await ok(t, await post(CHAT, chatBody(), { 'x-goog-api-key': 'sk-alice-0001' }), 'x-goog-api-key');
  await ok(t, await post(CHAT, chatBody(), bearer(HASHED)), 'a key declared by key_sha256');
});

t.test('order: Bearer wins over x-api-key, which wins over x-goog-api-key', async (t) => {
  sim.clear();
  await expectOpenAIError(t, await post(CHAT, chatBody(), { ...bearer('sk-wrong'), 'x-api-key': 'sk-alice-0001' }), 401, 'INVALID_API_KEY', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT, chatBody(), { 'x-api-key': 'sk-wrong', 'x-goog-api-key': 'sk-alice-0001' }), 401, 'INVALID_API_KEY', 'invalid_request_error');
  t.equal(sim.requests.length, 0, 'a bad first credential is refused, not skipped');
  await ok(t, await post(CHAT, chatBody(), { ...bearer('sk-alice-0001'), 'x-api-key': 'sk-wrong', 'x-goog-api-key': 'sk-wrong' }), 'good Bearer, bad others');
  await ok(t, await post(CHAT, chatBody(), { 'x-api-key': 'sk-alice-0001', 'x-goog-api-key': 'sk-wrong' }), 'good x-api-key, bad x-goog-api-key');
});

t.test('key states: missing, unknown, disabled, expired', async (t) => {
  sim.clear();
  const missing = await expectOpenAIError(t, await post(CHAT, chatBody()), 401, 'API_KEY_REQUIRED', 'invalid_request_error');
  t.match(missing.message, 'Authorization');
  await expectOpenAIError(t, await post(CHAT, chatBody(), { authorization: 'Basic c2stYWxpY2UtMDAwMQ==' }), 401, 'API_KEY_REQUIRED', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT, chatBody(), { authorization: 'Bearer ' }), 401, 'API_KEY_REQUIRED', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT, chatBody(), bearer('sk-alice-0001x')), 401, 'INVALID_API_KEY', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT, chatBody(), bearer('sk-off-0003')), 401, 'API_KEY_DISABLED', 'invalid_request_error');
  const expired = await post(CHAT, chatBody(), bearer('sk-old-0004'));
  t.equal(expired.headers.get('x-should-retry'), 'false', 'SDKs must not retry an expired key');
  await expectOpenAIError(t, expired, 403, 'API_KEY_EXPIRED', 'permission_error');
  t.equal(sim.requests.length, 0, 'no refused request reached the upstream');
});

t.test('?key= and ?api_key= are refused outside /v1beta', async (t) => {
  sim.clear();
  const err = await expectOpenAIError(t, await post(CHAT + '?key=sk-alice-0001', chatBody()), 400, 'api_key_in_query_deprecated', 'invalid_request_error');
  t.equal(err.message, 'API key in query parameter is deprecated. Please use Authorization header instead.');
  await expectOpenAIError(t, await post(CHAT + '?key=sk-alice-0001', chatBody(), bearer('sk-alice-0001')), 400, 'api_key_in_query_deprecated', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT + '?api_key=sk-alice-0001', chatBody()), 400, 'api_key_in_query_deprecated', 'invalid_request_error');
  await expectOpenAIError(t, await fetch(gw.url + '/v1/models?key=sk-alice-0001'), 400, 'api_key_in_query_deprecated', 'invalid_request_error');
  t.equal(sim.requests.length, 0);
});

t.test('?key= is accepted under /v1beta/ and never forwarded', async (t) => {
  sim.clear();
  await ok(t, await post(gw.url + '/v1beta/chat?beta=true&key=sk-alice-0001', chatBody()), '?key= on /v1beta');
  t.equal(sim.requests.length, 1);
  const [upstream] = sim.requests;
  t.equal(upstream.path, '/v1/chat/completions', 'the key parameter is gone, and so is every parameter the chat format does not pass');
  t.equal(upstream.headers.authorization, 'Bearer upstream-credential-1');
  t.notMatch(JSON.stringify(upstream), 'sk-alice-0001', 'the client key appears nowhere upstream');
  await expectOpenAIError(t, await post(gw.url + '/v1beta/chat?key=sk-nope', chatBody()), 401, 'INVALID_API_KEY', 'invalid_request_error');
  await expectOpenAIError(t, await post(gw.url + '/v1beta/chat?key=', chatBody()), 401, 'API_KEY_REQUIRED', 'invalid_request_error');
  t.equal(sim.requests.length, 1, 'refused ?key= requests are not forwarded');
});

t.test('the admin token is refused on model routes', async (t) => {
  sim.clear();
  await expectOpenAIError(t, await post(CHAT, chatBody(), bearer('admin-secret-token-0123456789abcdef')), 401, 'INVALID_API_KEY', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT, chatBody(), { 'x-api-key': 'admin-secret-token-0123456789abcdef' }), 401, 'INVALID_API_KEY', 'invalid_request_error');
  await expectOpenAIError(t, await fetch(gw.url + '/v1/models', { headers: bearer('admin-secret-token-0123456789abcdef') }), 401, 'INVALID_API_KEY', 'invalid_request_error');
  t.equal(sim.requests.length, 0);
});

t.test('knownDigests: the SHA-256 of a key, remembered only when told, the oldest let go past the limit', async (t) => {
  const hex = (k: string) => createHash('sha256').update(k).digest('hex');
  const d = knownDigests(3);
  t.equal(d.get('sk-a'), undefined, 'a key not remembered has no digest here (the caller hashes it)');
  for (const k of ['sk-a', 'sk-b', 'sk-c']) d.remember(k, hex(k));
  t.equal(d.get('sk-b'), hex('sk-b'), 'a remembered key gives its digest');
  d.remember('sk-d', hex('sk-d'));
  t.equal(d.get('sk-a'), undefined, 'past the limit the oldest goes');
  t.ok(d.get('sk-b') && d.get('sk-c') && d.get('sk-d'));
});
