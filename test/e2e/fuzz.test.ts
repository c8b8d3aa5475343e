// Fuzz: random methods, paths, queries, headers, bodies and encodings against every route family of the shipped
// gateway.yaml. Whatever a client sends: no 5xx of the gateway's own, every error in the envelope of the route's format,
// the upstream only ever sees declared paths, allowed query parameters and allowed headers, and the ledger holds exactly
// the requests that reached an upstream.
import { request } from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { formats } from '../../app/registry.ts';
import { eventually } from '../admin/helpers.ts';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_KEY, SHIPPED_CONFIG } from '../helpers/e2e.ts';

const ADMIN = 'fuzz-admin-token-0123456789abcdef';
const { gateway } = await withLoggedGateway(t, SHIPPED_CONFIG, { GATEWAY_ADMIN_TOKEN: ADMIN });
const upstream = () => Object.values(gateway.simulators).flatMap((s) => s.requests);

// ---- what a client may send ----

const seg = fc.oneof(
  fc.constantFrom('resp_abc', 'input_tokens', 'cancel', 'gpt-4o-mini', 'gemini-2.5-flash', 'claude-sonnet-4-5', 'x', 'codex', 'ft:gpt-4o-mini:org::1'),
  fc.constantFrom('..', '.', '%2e%2e', '%2E', '%2F', 'a%2Fb', '%3F', 'a%3Fb=1', '%23', '%5C', '%00', '%0D%0A', '%', '%zz', '', 'caf%C3%A9', '~', '*'),
  fc.stringMatching(/^[A-Za-z0-9._~:-]{1,12}$/),
);
// Admin reads with hostile query values: cursors that are not ones, windows named like Object.prototype's fields, limits
// of every kind.
const adminQuery = fc.array(fc.tuple(
  fc.constantFrom('cursor', 'window', 'limit', 'key', 'since', 'until', 'model', 'group', 'status'),
  fc.oneof(fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', '5h', '1d', '7d', '-1', '0', '1e309', 'NaN',
    'abc', '%00', '%FF', 'eyJ4IjoxfQ', 'demo', '2026-13-45', '9'.repeat(40)), fc.stringMatching(/^[A-Za-z0-9_~.-]{0,40}$/)),
), { minLength: 1, maxLength: 3 }).map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`);
// Model names a glob admits but no configuration names (each one may not become a metric series, a rollup or a log
// line), names of every length, and names that are no names.
const INVENTED = 'fz';
const modelName = fc.oneof(
  fc.constantFrom('gpt-4o-mini', 'gpt-5', 'claude-sonnet-4-5', 'gemini-2.5-flash'),
  fc.stringMatching(/^[a-z0-9._:-]{1,24}$/).map((x) => `gpt-5-${INVENTED}${x}`),
  fc.stringMatching(/^[a-z0-9._-]{1,24}$/).map((x) => `claude-${INVENTED}${x}`),
  fc.integer({ min: 200, max: 5000 }).map((n) => `gpt-5-${INVENTED}${'x'.repeat(n)}`),
  fc.constantFrom('', ' ', '../x', 'gpt-5\u0000', 'gpt-5\n', '__proto__', 'constructor'),
);
// Media given by URL: private and special addresses in every spelling, schemes that are not http, and data URLs.
const mediaUrl = fc.constantFrom(
  'http://127.0.0.1/a.png', 'http://[::1]/a.png', 'http://[::ffff:127.0.0.1]/a.png', 'http://[::7f00:1]/a.png', 'http://[64:ff9b::7f00:1]/a.png',
  'http://[2002:7f00:1::]/a.png', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.1/a.png', 'http://0x7f000001/a.png',
  'http://2130706433/a.png', 'file:///etc/passwd', 'gopher://x/', 'ftp://x/a.png', 'data:image/png;base64,iVBORw0KGgo=', 'data:,x', 'http://localhost:1/a.png',
);
const families: [string, fc.Arbitrary<string>][] = [
  ['chat', fc.constantFrom('/v1/chat/completions', '/chat/completions')],
  ['responses', fc.tuple(fc.constantFrom('/v1/responses', '/responses', '/backend-api/codex/responses'), fc.array(seg, { maxLength: 3 }))
    .map(([base, rest]) => [base, ...rest].join('/'))],
  ['messages', fc.constantFrom('/v1/messages', '/v1/messages/count_tokens', '/antigravity/v1/messages')],
  ['gemini', fc.tuple(fc.constantFrom('/v1beta/models/', '/v1/models/', '/antigravity/v1beta/models/'), seg,
    fc.constantFrom(':generateContent', ':streamGenerateContent', ':countTokens', ':nothing', '', '/x'))
    .map(([base, model, verb]) => base + model + verb)],
  ['images', fc.constantFrom('/v1/images/generations', '/v1/images/edits', '/images/generations')],
  ['models', fc.tuple(fc.constantFrom('/v1/models', '/v1beta/models', '/antigravity/v1/models'), fc.option(seg)).map(([b, s]) => (s === null ? b : `${b}/${s}`))],
  ['usage', fc.constantFrom('/v1/usage', '/antigravity/v1/usage')],
  ['admin', fc.oneof(
    fc.tuple(fc.constantFrom('/admin/keys', '/admin/usage', '/admin/keys/'), fc.option(seg)).map(([b, s]) => b + (s ?? '')),
    fc.tuple(fc.constantFrom('/admin/usage', '/admin/usage/summary', '/admin/groups', '/admin/accounts', '/admin/keys/demo/usage'), adminQuery)
      .map(([b, q]) => b + q),
  )],
  ['other', fc.array(seg, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`)],
];
const query = fc.array(fc.tuple(fc.constantFrom('key', 'api_key', 'alt', 'beta', 'stream', 'include[]', 'x', 'redirect', 'url'),
  fc.constantFrom(DEMO_KEY, 'sse', 'true', '1', 'http://169.254.169.254/', '%2e%2e/x')), { maxLength: 3 })
  .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&')}` : ''));
const hostileHeaders = fc.dictionary(fc.constantFrom(
  'openai-organization', 'openai-project', 'chatgpt-account-id', 'x-goog-user-project', 'x-forwarded-for', 'forwarded',
  'x-real-ip', 'cookie', 'proxy-authorization', 'x-custom', 'anthropic-beta', 'anthropic-version', 'x-goog-api-client',
  'session_id', 'x-stainless-lang', 'openai-beta', 'content-encoding', 'x-http-method-override', 'host', 'x-request-id',
), fc.constantFrom('1', 'org-x', 'gzip', 'true', 'a'.repeat(300), '2023-06-01', 'tools-2024-05-16'), { maxKeys: 5 });
const auth = fc.constantFrom<Record<string, string>>(
  {}, { authorization: `Bearer ${DEMO_KEY}` }, { 'x-api-key': DEMO_KEY }, { 'x-goog-api-key': DEMO_KEY },
  { authorization: 'Bearer sk-wrong' }, { authorization: `Bearer ${ADMIN}` },
);
const validBodies = [
  { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
  { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Hello' }] },
  { model: 'gpt-5', input: 'Hello' },
  { model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] },
  { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] },
  { model: 'gpt-image-1', prompt: 'a cat' },
];
const body = fc.oneof(
  fc.constantFrom(...validBodies).map((b) => JSON.stringify(b)),
  fc.tuple(fc.constantFrom(...validBodies), fc.string(), fc.jsonValue({ maxDepth: 3 }))
    .map(([b, k, v]) => JSON.stringify({ ...b, [k]: v })),
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 200 }),
  fc.constant(`{"tools":${'['.repeat(2000)}${']'.repeat(2000)}}`),
  fc.constant(''),
);
const anything = fc.record({
  method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
  family: fc.constantFrom(...families.map(([name]) => name)),
  path: fc.constant(''),
  query, headers: hostileHeaders, auth, body,
  contentType: fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', ''),
}).chain((r) => families.find(([name]) => name === r.family)![1].map((path) => ({ ...r, path })));

// Requests a real client would make, with hostile headers, query parameters and extra body fields on top: these reach
// the upstream, so what it sees can be checked.
const extra = fc.dictionary(fc.constantFrom('metadata', 'user', 'store', 'x', 'stream_options', 'generationConfig'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });
const withImage = (body: Record<string, unknown>, url: string): Record<string, unknown> => {
  if (Array.isArray(body.messages) && 'max_tokens' in body) {
    return { ...body, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image', source: { type: 'url', url } }] }] };
  }
  if (Array.isArray(body.messages)) return { ...body, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url } }] }] };
  if ('input' in body) return { ...body, input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is it?' }, { type: 'input_image', image_url: url }] }] };
  if (Array.isArray(body.contents)) return { ...body, contents: [{ role: 'user', parts: [{ text: 'What is it?' }, { fileData: { mimeType: 'image/png', fileUri: url } }] }] };
  return body;
};
const clientChanges = fc.record({ model: fc.option(modelName, { freq: 2 }), image: fc.option(mediaUrl, { freq: 2 }) });
const near = fc.tuple(fc.constantFrom(
  ['/v1/chat/completions', { authorization: `Bearer ${DEMO_KEY}` }, validBodies[0]],
  ['/chat/completions', { authorization: `Bearer ${DEMO_KEY}` }, validBodies[1]],
  ['/v1/responses', { authorization: `Bearer ${DEMO_KEY}` }, validBodies[2]],
  ['/backend-api/codex/responses', { authorization: `Bearer ${DEMO_KEY}` }, { ...validBodies[2], stream: true }],
  ['/v1/responses/input_tokens', { authorization: `Bearer ${DEMO_KEY}` }, validBodies[2]],
  ['/v1/messages', { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' }, validBodies[3]],
  ['/v1/messages/count_tokens', { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' }, validBodies[3]],
  ['/v1beta/models/gemini-2.5-flash:generateContent', { 'x-goog-api-key': DEMO_KEY }, validBodies[4]],
  ['/v1beta/models/gemini-2.5-flash:streamGenerateContent', { 'x-goog-api-key': DEMO_KEY }, validBodies[4]],
  ['/v1/images/generations', { authorization: `Bearer ${DEMO_KEY}` }, validBodies[5]],
) as fc.Arbitrary<[string, Record<string, string>, Record<string, unknown>]>, extra, query, hostileHeaders, clientChanges).map(([[path, auth, body], more, q, headers, change]) => {
  let sent: Record<string, unknown> = { ...body, ...more };
  if (change.image !== null) sent = withImage(sent, change.image);
  if (change.model !== null && 'model' in body) sent.model = change.model;
  return { method: 'POST', family: 'near', path, query: q, headers, auth, body: JSON.stringify(sent), contentType: 'application/json' };
});

const requestArb = fc.oneof(anything, near);

// ---- what the upstream may see ----

const upstreamPaths: RegExp[] = [
  /^\/v1\/chat\/completions$/, /^\/v1\/responses$/, /^\/v1\/responses\/[A-Za-z0-9_-]+(\/cancel)?$/, /^\/v1\/messages(\/count_tokens)?$/,
  /^\/v1beta\/models\/[^/:?#]+:(generateContent|streamGenerateContent|countTokens)$/, /^\/v1\/images\/(generations|edits)$/,
  /^\/v1(beta)?\/models$/, // credential checks
];
const allowedQuery = new Set(Object.values(formats).flatMap((f) => f.forwardQuery));
const allowedHeader = (name: string) =>
  ['host', 'connection', 'content-length', 'transfer-encoding', 'accept-encoding', 'authorization', 'x-api-key', 'x-goog-api-key'].includes(name)
  || Object.values(formats).some((f) => f.forwardHeaders.some((h) => (h.endsWith('*') ? name.startsWith(h.slice(0, -1)) : name === h)))
  || name.startsWith('x-simulator-') || ['session_id', 'session-id', 'conversation_id', 'x-session-affinity', 'x-claude-code-session-id'].includes(name);

// ---- the envelope each family's errors must come in ----

const ENVELOPES: Record<string, (b: any) => boolean> = {
  openai: (b) => typeof b?.error?.message === 'string' && typeof b.error.type === 'string' && 'code' in b.error,
  anthropic: (b) => b?.type === 'error' && typeof b.error?.type === 'string' && typeof b.error.message === 'string',
  gemini: (b) => typeof b?.error?.code === 'number' && typeof b.error.status === 'string' && typeof b.error.message === 'string',
  gateway: (b) => typeof b?.error?.code === 'string' && typeof b.error.message === 'string',
};
function envelopeFor(path: string, method: string): (b: any) => boolean {
  if (/^\/(antigravity\/)?v1beta\//.test(path) || /^\/v1\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/.test(path)) return ENVELOPES.gemini;
  if (/^\/(antigravity\/)?v1\/messages/.test(path) || (path.startsWith('/antigravity/v1/') && method !== 'GET')) return ENVELOPES.anthropic;
  if (path.startsWith('/admin')) return ENVELOPES.gateway;
  // Model lists answer in the shape their headers ask for; anything else nearest an OpenAI route.
  return (b) => ENVELOPES.openai(b) || ENVELOPES.anthropic(b) || ENVELOPES.gateway(b) || ENVELOPES.gemini(b);
}

interface Sent { status: number; headers: Record<string, string | string[] | undefined>; text: string }

type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer R> ? R : never;

function send(r: FuzzRequest, id: string): Promise<Sent> {
  const url = new URL(gateway.url);
  const payload = r.method === 'GET' || r.method === 'OPTIONS' ? undefined : Buffer.from(r.body);
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, method: r.method, path: r.path + r.query, agent: false,
      headers: {
        ...r.headers, ...r.auth, 'x-request-id': id, host: 'gateway',
        ...(r.contentType ? { 'content-type': r.contentType } : {}),
        ...(payload ? { 'content-length': payload.length } : {}),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

t.test('random requests to every route family', async (t) => {
  const problems: string[] = [];
  let n = 0;
  await fc.assert(fc.asyncProperty(requestArb, async (r) => {
    const id = `fuzz-${++n}`;
    const res = await send(r, id);
    const what = `${r.method} ${r.path}${r.query} → ${res.status}`;
    const relayed = res.headers['x-upstream-request-id'] !== undefined;
    if (res.status >= 500 && !relayed) problems.push(`${what}: a 5xx of the gateway's own: ${res.text.slice(0, 200)}`);
    if (res.status >= 400 && !relayed && String(res.headers['content-type']).includes('json')) {
      let parsed: unknown;
      try { parsed = JSON.parse(res.text); } catch { problems.push(`${what}: an error body that is not JSON`); return; }
      if (!envelopeFor(r.path, r.method)(parsed)) problems.push(`${what}: not in the route's envelope: ${res.text.slice(0, 200)}`);
    } else if (res.status >= 400 && !relayed && res.status !== 404 && res.status !== 405) {
      problems.push(`${what}: an error without a JSON body (${res.headers['content-type']})`);
    }
  }), { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? 20261123) });
  t.same(problems.slice(0, 20), [], `${n} requests: every answer of the gateway's own well formed`);

  const seen = upstream();
  const badPaths = seen.filter((u) => !upstreamPaths.some((re) => re.test(u.path.split('?')[0])));
  t.same(badPaths.map((u) => u.path), [], `${seen.length} upstream requests: only declared paths`);
  // The gateway's own GETs (credential checks, model lists) carry nothing of a client's; what a client sent rides on POSTs.
  const relayedRequests = seen.filter((u) => u.method === 'POST');
  const badQuery = relayedRequests.flatMap((u) => [...new URLSearchParams(u.path.split('?')[1] ?? '').keys()].filter((k) => !allowedQuery.has(k)));
  t.same(badQuery, [], 'only allowed query parameters');
  const badHeaders = relayedRequests.flatMap((u) => Object.keys(u.headers).filter((h) => !allowedHeader(h)));
  t.same([...new Set(badHeaders)], [], 'only allowed headers');
  const hostile = ['openai-organization', 'openai-project', 'chatgpt-account-id', 'x-goog-user-project', 'x-forwarded-for', 'cookie', 'x-custom'];
  t.same(seen.filter((u) => u.method === 'GET').flatMap((u) => Object.keys(u.headers).filter((h) => hostile.includes(h))), [], 'the gateway\'s own GETs carry no client header');
  // (The generator also puts the key in bodies and query values a format passes on: that is content, not a credential.)
  t.notOk(seen.some((u) => JSON.stringify(u.headers).includes(DEMO_KEY) || /[?&](key|api_key)=/.test(u.path)), 'never the client\'s key as a credential');

  // Every request that reached an upstream (not a credential check, not a stored-response read) is in the ledger once.
  // (Token counts are not billed requests: routes with billed: false.)
  const relayed = seen.filter((u) => u.method === 'POST' && !/count_tokens|:countTokens|input_tokens/.test(u.path));
  const records = await eventually(async () => {
    const res = await fetch(`${gateway.url}/admin/usage?key=demo&limit=500`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return (await res.json() as { records: { request_id: string }[] }).records;
  }, (rs) => rs.length >= relayed.length, 5000);
  t.equal(records.length, relayed.length, `the ledger holds the ${relayed.length} requests that reached the upstream`);
  t.equal(new Set(records.map((r) => r.request_id)).size, records.length, 'each once');

  // Invented model names leave no trace in what every scrape and every usage page carries.
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.notOk(metrics.includes(`-${INVENTED}`), 'no metric series names an invented model');
  const usage = await (await fetch(`${gateway.url}/v1/usage`, { headers: { authorization: `Bearer ${DEMO_KEY}` } })).text();
  t.ok(usage.length < 64_000, `/v1/usage stays small (${usage.length} bytes)`);
  t.notOk(/x{257}/.test(usage) || /x{257}/.test(JSON.stringify(records)), 'no model name over 256 characters was recorded');
});

t.test('admin reads with hostile query values: a 400 in the gateway\'s envelope or an answer, never a 5xx', async (t) => {
  const problems: string[] = [];
  const paths = fc.tuple(fc.constantFrom('/admin/usage', '/admin/usage/summary', '/admin/groups', '/admin/accounts', '/admin/keys', '/admin/keys/demo/usage'), adminQuery);
  await fc.assert(fc.asyncProperty(paths, async ([path, q]) => {
    const res = await fetch(gateway.url + path + q, { headers: { authorization: `Bearer ${ADMIN}` } });
    const text = await res.text();
    if (res.status >= 500) problems.push(`GET ${path}${q} → ${res.status}: ${text.slice(0, 160)}`);
    else if (res.status >= 400 && !ENVELOPES.gateway(JSON.parse(text))) problems.push(`GET ${path}${q} → ${res.status}: not the gateway's envelope`);
  }), { numRuns: 300, seed: Number(process.env.FUZZ_SEED ?? 20261202) });
  t.same(problems.slice(0, 10), [], 'every admin answer well formed');
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.match(metrics, /^gateway_store_available 1$/m, 'and no request of theirs marked the store unavailable');
});
