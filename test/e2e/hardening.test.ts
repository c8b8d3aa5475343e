// The shipped gateway.yaml under attack: a client's request id is never the identity of billing or limits, a captured path
// never reaches another upstream endpoint, client headers reach the upstream only by each format's allow list, a request
// the upstream refuses with 401 takes no account offline, deep JSON and Gemini bodies are refused in the client's format,
// and aborted uploads are not billed. Each case reproduces a defect of the hardening issue.
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_KEY, SHIPPED_CONFIG } from '../helpers/e2e.ts';
import { bearer, metricsText, metricValue, post, rawRequest } from '../helpers/http.ts';

const ADMIN = 'hardening-admin-token-0123456789abcdef';
const LIMITED = 'sk-demo-limited';
const env = { GATEWAY_ADMIN_TOKEN: ADMIN };
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] };

async function shipped(t: Test) {
  const { gateway, requests } = await withLoggedGateway(t, SHIPPED_CONFIG, env);
  const upstream = () => Object.values(gateway.simulators).flatMap((s) => s.requests);
  const records = async (key: string) => {
    const res = await fetch(`${gateway.url}/admin/usage?key=${key}&limit=500`, { headers: bearer(ADMIN) });
    return (await res.json() as { records: { request_id: string; client_request_id?: string; status: number }[] }).records;
  };
  return { gateway, requests, upstream, records };
}

t.test('defect 1: the same x-request-id 70 times on a key limited to 60 rpm: 60 admitted, 60 billed, 10 refused', async (t) => {
  const { gateway, records } = await shipped(t);
  const statuses: number[] = [];
  for (let i = 0; i < 70; i++) {
    const res = await post(`${gateway.url}/v1/chat/completions`, chat, { ...bearer(LIMITED), 'x-request-id': 'fixed-1' });
    statuses.push(res.status);
    await res.arrayBuffer();
  }
  t.equal(statuses.filter((s) => s === 200).length, 60, '60 served');
  t.equal(statuses.filter((s) => s === 429).length, 10, 'then refused by rpm');
  const billed = await eventually(() => records('demo-limited'), (r) => r.length >= 60);
  t.equal(billed.length, 60, 'every admitted request is billed');
  t.equal(new Set(billed.map((r) => r.request_id)).size, 60, 'each under a gateway id of its own');
  t.ok(billed.every((r) => r.client_request_id === 'fixed-1'), 'the client\'s id is kept as client_request_id');
});

t.test('defect 1: 50 concurrent streams with one id on a concurrency-4 key: 4 admitted, the rest refused', async (t) => {
  const { gateway, upstream } = await shipped(t);
  const streams = await Promise.all(Array.from({ length: 50 }, () => post(`${gateway.url}/v1/chat/completions`,
    { ...chat, stream: true }, { ...bearer(LIMITED), 'x-request-id': 'same-stream', 'x-simulator-chunk-delay-ms': '500' })
    .then(async (res) => ({ status: res.status, limit: res.headers.get('x-gateway-limit'), text: await res.text() }))));
  t.equal(streams.filter((s) => s.status === 200).length, 4, 'only the key\'s 4 slots');
  t.ok(streams.filter((s) => s.status === 429).every((s) => s.limit === 'concurrency'), 'the others refused by concurrency');
  t.equal(upstream().length, 4, 'four reached the upstream');
});

t.test('defect 1: an id colliding with another key\'s is still in /admin/usage, once per key', async (t) => {
  const { gateway } = await shipped(t);
  for (const key of [DEMO_KEY, LIMITED]) {
    const res = await post(`${gateway.url}/v1/chat/completions`, chat, { ...bearer(key), 'x-request-id': 'collide-1' });
    t.equal(res.status, 200);
    await res.arrayBuffer();
  }
  const all = async () => (await (await fetch(`${gateway.url}/admin/usage?limit=500`, { headers: bearer(ADMIN) })).json() as { records: { key_id: string }[] }).records;
  const listed = await eventually(all, (r) => r.length >= 2);
  t.same(listed.map((r) => r.key_id).sort(), ['demo', 'demo-limited'], 'the global list has both');
});

t.test('defect 2: a captured path never reaches another upstream endpoint', async (t) => {
  const { gateway, upstream, records } = await shipped(t);
  const attacks: [string, string][] = [
    ['POST', '/v1/responses/..%2F..%2Fv1%2Fchat%2Fcompletions'],
    ['POST', '/v1/responses/..%2F..%2Fv1%2Ffiles'],
    ['POST', '/v1/responses/..%2F..%2Fv1%2Forganization%2Fadmin_api_keys'],
    ['POST', '/responses/..%2F..%2Fv1%2Fbatches'],
    ['POST', '/backend-api/codex/responses/..%2F..%2F..%2Fv1%2Fchat%2Fcompletions'],
    ['POST', '/v1/responses/input_tokens%3Fx%3D1'],
    ['POST', '/v1/responses/resp_1%23frag'],
    ['POST', '/v1/responses/resp_1%5C..%5C..%5Cv1%5Cfiles'],
    ['GET', '/v1/responses/%2e%2e'],
    ['GET', '/v1/responses/%2E'],
    ['POST', '/v1beta/models/..%2F..%2Fv1%2Fchat%2Fcompletions:generateContent'],
  ];
  for (const [method, path] of attacks) {
    // node:http sends the path as written (fetch would resolve the dot segments itself).
    const res = await rawRequest(gateway.url, {
      method, path, headers: { ...bearer(DEMO_KEY), 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: JSON.stringify({ model: 'gpt-5', input: 'hi', contents: [{ parts: [{ text: 'hi' }] }] }) } : {}),
    });
    const body = JSON.parse(res.body) as { error: { code?: string | number; status?: string } };
    t.equal(res.status, 400, `${method} ${path} → 400`);
    if (path.startsWith('/v1beta')) t.equal(body.error.status, 'INVALID_ARGUMENT', 'in Gemini\'s envelope');
    else t.equal(body.error.code, 'invalid_path', 'in OpenAI\'s envelope');
  }
  const restricted = await post(`${gateway.url}/v1/responses/resp_1/files`, { model: 'gpt-5' }, bearer(DEMO_KEY));
  t.equal(restricted.status, 404, 'a subpath the route does not allow is a 404');
  t.equal(upstream().length, 0, 'nothing reached any upstream');
  t.equal((await records('demo')).length, 0, 'nothing billed');

  const created = await (await post(`${gateway.url}/v1/responses`, { model: 'gpt-5', input: 'hi' }, bearer(DEMO_KEY))).json() as { id: string };
  const cancel = await post(`${gateway.url}/v1/responses/${created.id}/cancel`, {}, bearer(DEMO_KEY));
  t.equal(upstream().at(-1)?.path, `/v1/responses/${created.id}/cancel`, 'a declared subpath still goes through');
  t.not(cancel.status, 400);
});

t.test('defect 3: only each format\'s headers reach the upstream; account-level headers never do', async (t) => {
  const { gateway, upstream } = await shipped(t);
  const hostile = {
    'openai-organization': 'org-x', 'openai-project': 'proj-x', 'chatgpt-account-id': 'acct-x', 'x-goog-user-project': 'proj-x',
    'anthropic-dangerous-direct-browser-access': 'true', 'x-forwarded-for': '10.0.0.1', 'x-custom': '1', cookie: 'a=b',
  };
  const calls: [string, unknown, Record<string, string>][] = [
    ['/v1/chat/completions', chat, bearer(DEMO_KEY)],
    ['/v1/responses', { model: 'gpt-5', input: 'Hello' }, bearer(DEMO_KEY)],
    ['/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }] }, { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024-05-16' }],
    ['/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }, { 'x-goog-api-key': DEMO_KEY, 'x-goog-api-client': 'genai-js/1' }],
  ];
  for (const [path, body, auth] of calls) {
    const res = await post(gateway.url + path, body, { ...auth, ...hostile });
    t.equal(res.status, 200, path);
    const seen = upstream().at(-1)!;
    for (const name of Object.keys(hostile)) t.equal(seen.headers[name], undefined, `${path}: ${name} dropped`);
  }
  const [, , anthropicCall, geminiCall] = upstream();
  t.equal(anthropicCall.headers['anthropic-beta'], 'tools-2024-05-16', 'the format\'s own headers pass');
  t.equal(geminiCall.headers['x-goog-api-client'], 'genai-js/1');
});

t.test('defect 3: a request the upstream refuses with 401 takes no account offline; other tenants are served', async (t) => {
  const { gateway, upstream, records } = await shipped(t);
  // The simulator answers this request (not its credential) with 401, as OpenAI does to a mismatched organization.
  for (let i = 0; i < 5; i++) {
    const res = await post(`${gateway.url}/v1/chat/completions`, chat, { ...bearer(DEMO_KEY), 'x-simulator-fault': 'status=401' });
    const body = await res.json() as { error: { code: string; message: string } };
    t.equal(res.status, 403, 'the client gets its own error');
    t.equal(body.error.code, 'UPSTREAM_REQUEST_REFUSED');
    t.notMatch(body.error.message, /credential-\d|demo-upstream/, 'naming no credential');
  }
  const metrics = await metricsText(gateway.url);
  for (const account of ['demo-1', 'demo-2', 'demo-3']) {
    t.equal(metricValue(metrics, `gateway_account_state{group="demo",account="${account}",state="available"}`), 1, `${account} is still available`);
  }
  t.equal(metricValue(metrics, 'gateway_account_needs_attention_total{group="demo",account="demo-1"}') ?? 0, 0, 'no account flagged');
  const checks = upstream().filter((r) => r.method === 'GET');
  t.ok(checks.length >= 1 && checks.length <= 3, `the credentials were checked alone (${checks.length} checks for 5 refusals)`);
  t.ok(checks.every((r) => r.path === '/v1/models' && r.headers['x-simulator-fault'] === undefined), 'with nothing of the client\'s request');
  const other = await post(`${gateway.url}/v1/chat/completions`, chat, bearer(LIMITED));
  t.equal(other.status, 200, 'another tenant is served at once');
  t.equal((await records('demo')).every((r) => r.status === 403), true, 'the refused requests are recorded as failed');
});

t.test('defect 5: JSON nested 5000 levels deep is a 400 in each client\'s format, never a 500', async (t) => {
  const { gateway, requests, upstream } = await shipped(t);
  const deep = '['.repeat(5000) + ']'.repeat(5000);
  const cases: [string, string, Record<string, string>, (b: any) => boolean][] = [
    ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":${deep}}`, bearer(DEMO_KEY), (b) => b.error.code === 'invalid_body'],
    ['/v1/responses', `{"model":"gpt-5","input":"hi","tools":${deep}}`, bearer(DEMO_KEY), (b) => b.error.code === 'invalid_body'],
    ['/v1/messages', `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":${deep}}`, { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' }, (b) => b.type === 'error' && b.error.type === 'invalid_request_error'],
    ['/v1beta/models/gemini-2.5-flash:generateContent', `{"contents":[{"parts":[{"text":"hi"}]}],"tools":${deep}}`, { 'x-goog-api-key': DEMO_KEY }, (b) => b.error.status === 'INVALID_ARGUMENT'],
  ];
  for (const [path, body, auth] of cases) {
    const res = await post(gateway.url + path, body, auth);
    t.equal(res.status, 400, `${path}: 400`);
    t.ok(cases.find((c) => c[0] === path)![3](await res.json()), `${path}: in the client's envelope`);
  }
  t.equal(upstream().length, 0, 'nothing forwarded');
  await sleep(50);
  t.notOk(requests.some((r) => r.status >= 500), 'no 5xx logged');
});

t.test('defect 7: Gemini bodies are checked, and aborted uploads are not billed', async (t) => {
  const { gateway, upstream, records } = await shipped(t);
  const bad = await post(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`, '{"contents": [', { 'x-goog-api-key': DEMO_KEY });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { error: { code: 400, status: 'INVALID_ARGUMENT' } }, 'malformed JSON refused in Google\'s envelope');
  const notObject = await post(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`, '{"contents": "x"}', { 'x-goog-api-key': DEMO_KEY });
  t.equal(notObject.status, 400, 'a body breaking the shape is refused too');
  t.equal(upstream().length, 0, 'neither reached the upstream');

  const port = Number(new URL(gateway.url).port);
  for (let i = 0; i < 10; i++) {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /v1beta/models/gemini-2.5-flash:generateContent HTTP/1.1\r\nhost: x\r\nx-goog-api-key: ${DEMO_KEY}\r\n`
      + 'content-type: application/json\r\ncontent-length: 5000\r\n\r\n{"contents": [{"parts": [{"text": "cut');
    await sleep(30);
    socket.destroy();
  }
  await sleep(300);
  t.equal((await records('demo')).length, 0, '10 cut uploads, none billed');
  t.equal(upstream().length, 0, 'none forwarded');
});

t.test('defect 8: a 404 and a 405 on Gemini paths are in Google\'s envelope; on Anthropic\'s, in Anthropic\'s', async (t) => {
  const { gateway } = await shipped(t);
  const wrongMethod = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`);
  t.equal(wrongMethod.status, 405);
  t.match(await wrongMethod.json(), { error: { code: 405, status: 'INVALID_ARGUMENT' } });
  const unknown = await post(`${gateway.url}/v1beta/models/gemini-2.5-flash:nothing`, {}, { 'x-goog-api-key': DEMO_KEY });
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { error: { code: 404, status: 'NOT_FOUND' } });
  const messages = await fetch(`${gateway.url}/v1/messages`);
  t.equal(messages.status, 405);
  t.match(await messages.json(), { type: 'error', error: { type: 'invalid_request_error' } });
  t.equal(messages.headers.get('request-id'), messages.headers.get('x-request-id'), 'request-id is the gateway\'s id');
});
