// Issue 38, item 5: an upstream 401/403 to a translated request. The credential is checked with the upstream platform's
// own check (an Anthropic upstream's GET /v1/models, never the Gemini client's /v1beta/models, which Anthropic answers
// 404); a check that cannot tell pauses no account, however many keys are refused; and a model the account may not use
// (Anthropic's 403 permission_error) reaches every client format as a 403 in its own envelope.
import t, { type Test } from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, metricsText, metricValue, post } from '../helpers/http.ts';
import { startUpstream } from '../helpers/upstream.ts';

const ALICE = 'sk-alice-refusals';
const BOB = 'sk-bob-refusals';
/** A model the upstream accounts may not use. */
const FORBIDDEN = 'claude-opus-4-1';
const ALLOWED = 'claude-haiku-4-5';

/**
 * An Anthropic-only upstream (the simulator behind it serves every format; a real Anthropic does not): 404 off its own
 * paths, 403 permission_error for FORBIDDEN, the credential check (GET /v1/models) answered `checkStatus` when given.
 */
async function anthropicUpstream(t: Test, checkStatus?: number) {
  const sim = await startSimulator();
  t.teardown(() => sim.close());
  const checks: string[] = [];
  const upstream = await startUpstream(t, async (req, res, exchange) => {
    const error = (status: number, type: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type, message } }));
    };
    if (req.method === 'GET') checks.push(`${req.url} version=${req.headers['anthropic-version']} key=${req.headers['x-api-key']}`);
    if (req.method === 'GET' && checkStatus !== undefined) return error(checkStatus, 'api_error', 'Internal server error');
    if (!/^\/v1\/(messages|models)/.test(req.url ?? '')) return error(404, 'not_found_error', 'Not Found');
    if (req.method === 'POST' && (JSON.parse(exchange.body) as { model?: string }).model === FORBIDDEN) {
      return error(403, 'permission_error', `Your organization does not have access to ${FORBIDDEN}`);
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const name of ['x-api-key', 'anthropic-version']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
    const answer = await fetch(sim.url + req.url, { method: req.method, headers, ...(req.method === 'POST' ? { body: exchange.body } : {}) });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  return { upstream, checks };
}

async function gatewayOn(t: Test, checkStatus?: number) {
  const { upstream, checks } = await anthropicUpstream(t, checkStatus);
  const gateway = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
platforms:
  anthropic-only: { base_url: "${upstream.url}", auth: x-api-key, format: [anthropic-messages] }
groups:
  main:
    platform: anthropic-only
    models: ["claude-*"]
    accounts:
      - { id: acct-1, credential: credential-1 }
      - { id: acct-2, credential: credential-2 }
keys:
  - { id: alice, key: ${ALICE}, group: main }
  - { id: bob, key: ${BOB}, group: main }
pipelines:
  relay: [auth, group-check, model-allowlist, proxy]
routes:
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: relay }
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
`);
  const gemini = (key: string, model: string) => post(`${gateway.url}/v1beta/models/${model}:generateContent`,
    { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }, { 'x-goog-api-key': key });
  const messages = (key: string, model: string) => post(`${gateway.url}/v1/messages`,
    { model, max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] }, { 'x-api-key': key, 'anthropic-version': '2023-06-01' });
  const chat = (key: string, model: string) => post(`${gateway.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'Hello' }] }, bearer(key));
  const available = async () => {
    const m = await metricsText(gateway.url);
    return ['acct-1', 'acct-2'].map((a) => metricValue(m, `gateway_account_state{group="main",account="${a}",state="available"}`));
  };
  return { gateway, upstream, checks, gemini, messages, chat, available };
}

t.test('a model the accounts may not use: 403 in every client format, checked the upstream\'s way, no account paused', async (t) => {
  const { upstream, checks, gemini, messages, chat, available } = await gatewayOn(t);
  for (const key of [ALICE, BOB]) {
    const res = await gemini(key, FORBIDDEN);
    t.equal(res.status, 403, 'a Gemini client gets the 403');
    t.match(await res.json(), { error: { code: 403, status: 'PERMISSION_DENIED', message: /refused this request/ } }, 'in Google\'s envelope');
  }
  const native = await messages(ALICE, FORBIDDEN);
  t.equal(native.status, 403, 'a native Anthropic client gets the 403');
  t.match(await native.json(), { type: 'error', error: { type: 'permission_error' } }, 'in Anthropic\'s envelope');
  const openai = await chat(BOB, FORBIDDEN);
  t.equal(openai.status, 403, 'an OpenAI chat client gets the 403');
  t.match(await openai.json(), { error: { code: 'UPSTREAM_REQUEST_REFUSED', type: 'permission_error' } }, 'in OpenAI\'s envelope');

  t.ok(checks.length >= 1, `the credential was checked (${checks.length} checks)`);
  t.ok(checks.every((c) => /^\/v1\/models version=2023-06-01 key=credential-\d$/.test(c)), `always with Anthropic's own check: ${checks.join('; ')}`);
  t.same(await available(), [1, 1], 'both accounts stay available');
  const served = await messages(BOB, ALLOWED);
  t.equal(served.status, 200, 'a native request for an allowed model is served at once');
  const translated = await gemini(ALICE, ALLOWED);
  t.equal(translated.status, 200, 'and a translated one');
  t.equal(upstream.exchanges.filter((e) => e.url.startsWith('/v1beta')).length, 0, 'nothing went to a Gemini path upstream');
});

t.test('a credential check that cannot tell pauses no account, however many keys are refused', async (t) => {
  const { checks, gemini, messages, available } = await gatewayOn(t, 500);
  for (const key of [ALICE, BOB, ALICE, BOB]) {
    const res = await gemini(key, FORBIDDEN);
    t.equal(res.status, 403, 'the refused request gets the 403');
    t.match(await res.json(), { error: { code: 403, status: 'PERMISSION_DENIED', message: /refused this request \(HTTP 403\) on all 2 accounts tried; the credentials could not be checked/ } }, 'in Google\'s envelope');
  }
  t.ok(checks.length >= 2, 'each account was checked, and the check could not tell');
  t.same(await available(), [1, 1], 'no account paused');
  const served = await messages(BOB, ALLOWED);
  t.equal(served.status, 200, 'a native request is served');
});
