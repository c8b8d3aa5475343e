// Brute-force throttling (auth_throttle), as clients meet it: invalid model keys from one address are answered, then
// slowed, then refused with 429 in the client's own format (OpenAI, Anthropic and Gemini SDKs); invalid admin tokens the same
// in the admin API's format; a valid key or token from that address is never slowed or refused; each block is logged
// once and counted. The address is the peer's unless server.trusted_proxies names it a proxy.
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import t from 'tap';
import { withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { bearer, chatBody, metricValue, metricsText, post } from '../helpers/http.ts';
import { ADMIN, admin } from '../admin/helpers.ts';

const VALID = 'sk-valid-brute-0001';
const DELAY = 200;

const config = (server = '') => `
server: { host: 127.0.0.1, port: 0${server} }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
auth_throttle:
  keys: { slow_after: 2, delay_ms: ${DELAY}, max_delay_ms: ${2 * DELAY}, block_after: 4, block_ms: 60000 }
  admin: { slow_after: 1, delay_ms: ${DELAY}, max_delay_ms: ${2 * DELAY}, block_after: 2, block_ms: 30000 }
platforms:
  sim: { simulator: true }
groups:
  main: { platform: sim, models: [gpt-4o-mini, claude-haiku-4-5, gemini-2.5-flash], accounts: [{ id: sim-1, credential: upstream-credential-1 }] }
keys:
  - { id: valid, key: ${VALID}, group: main }
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: [auth, group-check, proxy] }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: [auth, group-check, proxy] }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: [auth, group-check, proxy] }
  - { method: GET, path: /admin/keys, format: gateway, pipeline: [admin-auth, { admin-keys: { action: list } }] }
`;

/** How long `fn` took, and what it threw (or undefined). */
async function timed(fn: () => Promise<unknown>): Promise<{ ms: number; err: any }> {
  const start = performance.now();
  try { await fn(); return { ms: performance.now() - start, err: undefined }; } catch (err) { return { ms: performance.now() - start, err }; }
}

t.test('invalid model keys: answered, slowed, then 429 in the client\'s format; a valid key never', async (t) => {
  const { gateway, lines } = await withLoggedGateway(t, writeConfig(config()));
  const guess = (i: number) => new OpenAI({ apiKey: `sk-guess-${i}`, baseURL: gateway.url + '/v1', maxRetries: 0 });
  const ask = (client: OpenAI) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  const tries = [];
  for (let i = 0; i < 4; i++) tries.push(await timed(() => ask(guess(i))));
  t.same(tries.map((x) => x.err?.status), [401, 401, 401, 401], 'four invalid keys: 401 each');
  t.ok(tries.every((x) => x.err instanceof OpenAI.AuthenticationError && x.err.code === 'INVALID_API_KEY'));
  t.ok(tries[2].ms >= DELAY && tries[3].ms >= 2 * DELAY, `past slow_after the answers wait (${tries.map((x) => Math.round(x.ms)).join(', ')} ms)`);

  const blocked = await timed(() => ask(guess(4)));
  t.ok(blocked.err instanceof OpenAI.RateLimitError, 'the fifth: 429, as the OpenAI SDK reads it');
  t.match(blocked.err.error, { code: 'too_many_invalid_keys', type: 'rate_limit_error', message: 'Too many invalid API keys from this address: invalid keys are refused for 60 s' });
  t.equal(blocked.err.headers.get('retry-after'), '60');
  t.ok(blocked.ms < DELAY * 2, 'refused without waiting');

  // The valid key from the same address: served, at once.
  const valid = await timed(() => ask(new OpenAI({ apiKey: VALID, baseURL: gateway.url + '/v1', maxRetries: 0 })));
  t.equal(valid.err, undefined, 'a valid key is served during the block');
  const anthropic = new Anthropic({ apiKey: VALID, baseURL: gateway.url, maxRetries: 0 });
  t.equal((await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })).type, 'message');

  // An invalid key on an Anthropic route: the Anthropic envelope.
  const refused = await timed(() => new Anthropic({ apiKey: 'sk-ant-guess', baseURL: gateway.url, maxRetries: 0 }).messages.create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }));
  t.ok(refused.err instanceof Anthropic.RateLimitError, 'the Anthropic SDK reads a 429');
  t.match(refused.err.error, { type: 'error', error: { type: 'rate_limit_error', message: /Too many invalid API keys/ } });

  // And on a Gemini route: Google's envelope, as @google/genai reads it.
  const gemini = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: gateway.url, apiVersion: 'v1beta' } }).models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' });
  const google = await timed(() => gemini('AIza-guess'));
  t.ok(google.err instanceof ApiError && google.err.status === 429, 'the Gemini SDK reads a 429');
  t.match(JSON.parse(google.err.message), { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: /Too many invalid API keys/ } });
  t.ok((await gemini(VALID)).text, 'and serves the valid key');

  const blocks = lines.filter((l) => /invalid API keys from/.test(l.msg));
  t.equal(blocks.length, 1, 'one log line for the block, however many are refused in it');
  t.match(blocks[0], { level: 'warn', kind: 'key', client: '127.0.0.1', failures: 4, block_ms: 60000, msg: 'invalid API keys from 127.0.0.1: its invalid attempts are refused (429) for 60 s' });
  t.notOk(JSON.stringify(lines).includes('sk-guess-'), 'no guess is logged');
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_auth_throttle_total{credential="key",action="slowed"}'), 2);
  t.equal(metricValue(m, 'gateway_auth_throttle_total{credential="key",action="blocked"}'), 1);
  t.equal(metricValue(m, 'gateway_auth_throttle_total{credential="key",action="refused"}'), 3);
});

t.test('invalid admin tokens: slowed, then 429 in the admin format; the admin token and model keys are not', async (t) => {
  const { gateway, lines } = await withLoggedGateway(t, writeConfig(config()));
  const wrong = (i: number) => `wrong-admin-token-${i}-0123456789abcdef`;
  const first = await timed(() => admin(gateway, 'GET', '/admin/keys', undefined, wrong(0)));
  const second = await timed(async () => t.match(await admin(gateway, 'GET', '/admin/keys', undefined, wrong(1)), { status: 401, body: { error: { code: 'INVALID_ADMIN_TOKEN' } } }));
  t.ok(second.ms >= DELAY, `the second waits (${Math.round(first.ms)}, ${Math.round(second.ms)} ms)`);
  const third = await admin(gateway, 'GET', '/admin/keys', undefined, wrong(2));
  t.equal(third.status, 429);
  t.same(third.body, { error: { code: 'too_many_invalid_tokens', message: 'Too many invalid admin tokens from this address: invalid tokens are refused for 30 s', type: 'rate_limit_error' } });
  t.equal(third.headers.get('retry-after'), '30');
  t.equal((await admin(gateway, 'GET', '/admin/keys')).status, 200, 'the admin token still works from that address');
  t.match(await admin(gateway, 'GET', '/admin/keys', undefined, VALID), { status: 401, body: { error: { code: 'MODEL_KEY_REFUSED' } } }, 'a model key is refused as always, not throttled');
  t.equal((await admin(gateway, 'GET', '/admin/keys', undefined, wrong(3))).status, 429);
  t.equal((await post(gateway.url + '/v1/chat/completions', chatBody(), bearer('sk-other-guess'))).status, 401, 'model keys are counted apart');
  t.equal(lines.filter((l) => /invalid admin tokens from/.test(l.msg)).length, 1);
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_auth_throttle_total{credential="admin",action="refused"}'), 2);
  t.notOk(JSON.stringify(lines).includes('wrong-admin-token'), 'no token is logged');
});

t.test('behind a trusted proxy each client is its own; without one, X-Forwarded-For is never believed', async (t) => {
  const invalid = (url: string, xff?: string) => post(url + '/v1/chat/completions', chatBody(), { ...bearer('sk-bad'), ...(xff ? { 'x-forwarded-for': xff } : {}) }).then((r) => r.status);
  const behind = await withLoggedGateway(t, writeConfig(config(', trusted_proxies: [127.0.0.0/8, "::1"]')));
  const url = behind.gateway.url;
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push(await invalid(url, '203.0.113.5'));
  t.same(statuses, [401, 401, 401, 401, 429], 'client 203.0.113.5 is blocked');
  t.equal(await invalid(url, '203.0.113.6'), 401, 'another client behind the same proxy is not');
  t.equal(await invalid(url, '198.51.100.7, 203.0.113.5'), 429, 'the proxy\'s own hop counts, not what the client wrote before it');
  t.equal(await invalid(url, '203.0.113.5, 127.0.0.1'), 429, 'hops of trusted proxies are walked past');
  const ok = await post(url + '/v1/chat/completions', chatBody(), { ...bearer(VALID), 'x-forwarded-for': '203.0.113.5' });
  t.equal(ok.status, 200, 'its valid key is served');
  t.equal(behind.requests.at(-1)?.client, '203.0.113.5', 'and the log names the client, not the proxy');

  const direct = await withLoggedGateway(t, writeConfig(config()));
  const spoofed = [];
  for (let i = 0; i < 5; i++) spoofed.push(await invalid(direct.gateway.url, `192.0.2.${i}`));
  t.same(spoofed, [401, 401, 401, 401, 429], 'a new X-Forwarded-For each time does not escape the count');
  t.equal(direct.requests.at(-1)?.client, '127.0.0.1');
});
