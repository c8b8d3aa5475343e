// server.cors.origins: preflights (OPTIONS with Access-Control-Request-Method) answered for allowed origins on model routes,
// CORS headers on their answers (errors and relayed upstream answers included), nothing for other origins, never /admin/*.
import t from 'tap';
import { parseConfig } from '../../core/config.ts';
import { formats, plugins, upstreamAuth } from '../../app/registry.ts';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post, rawRequest } from '../helpers/http.ts';

const APP = 'https://app.example.com';
const KEY = 'sk-cors-0001';
const routes = `  - { method: GET, path: /v1/models, format: openai-chat, pipeline: [auth, list-models] }
  - { method: GET, path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
`;
const config = (origins: string) => chatConfig({ keyId: 'cors', key: KEY, server: `cors: { origins: ${origins} }`, routes })
  .replace('pricing:', 'admin: { token: admin-token-0001-0123456789abcdef }\npricing:');
const gw = await withGateway(t, config(`[${APP}, "http://127.0.0.1:5173"]`));

const preflight = (path: string, origin: string, method = 'POST', headers = 'authorization, content-type') =>
  rawRequest(gw.url, { method: 'OPTIONS', path, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
const corsHeaders = (h: Record<string, string | string[] | undefined>) => Object.fromEntries(Object.entries(h).filter(([k]) => k.startsWith('access-control-') || k === 'vary'));

t.test('a preflight from an allowed origin: 204 with the origin, the method, the asked headers, a max age', async (t) => {
  const res = await preflight('/v1/chat/completions', APP);
  t.equal(res.status, 204);
  t.equal(res.body, '');
  t.same(corsHeaders(res.headers), {
    'access-control-allow-origin': APP,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'authorization, content-type',
    'access-control-max-age': '600',
    vary: 'origin, access-control-request-method, access-control-request-headers',
  });
  const vendor = await preflight('/v1/models', 'http://127.0.0.1:5173', 'GET', 'x-api-key,anthropic-version,x-goog-api-key');
  t.equal(vendor.status, 204, 'the other listed origin');
  t.equal(vendor.headers['access-control-allow-headers'], 'x-api-key,anthropic-version,x-goog-api-key', 'vendor headers too');
  t.equal(vendor.headers['access-control-allow-methods'], 'GET');
});

t.test('refused preflights carry no CORS headers: another origin, a method no route takes, /admin/*', async (t) => {
  for (const [path, origin, method, why] of [
    ['/v1/chat/completions', 'https://evil.example.com', 'POST', 'an origin not listed'],
    ['/v1/chat/completions', 'https://app.example.com:8443', 'POST', 'another port is another origin'],
    ['/v1/chat/completions', APP, 'DELETE', 'a method no route takes there'],
    ['/v1/nothing-here', APP, 'POST', 'a path no route takes'],
    ['/admin/usage', APP, 'GET', 'the admin API'],
  ]) {
    const res = await preflight(path, origin, method);
    t.not(res.status, 204, `${why}: not answered as a preflight (${res.status})`);
    t.same(corsHeaders(res.headers), {}, `${why}: no CORS headers`);
  }
  const malformed = await preflight('/v1/chat/completions', APP, 'POST', 'authorization, bad header');
  t.equal(malformed.status, 204);
  t.equal(malformed.headers['access-control-allow-headers'], undefined, 'a malformed header list is not echoed');
});

t.test('answers to an allowed origin: relayed, refused and listed ones carry the origin and the exposed headers', async (t) => {
  const ok = await post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer(KEY), origin: APP });
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('access-control-allow-origin'), APP);
  t.equal(ok.headers.get('vary'), 'origin');
  const exposed = ok.headers.get('access-control-expose-headers')!.split(', ');
  for (const h of ['x-request-id', 'retry-after', 'x-gateway-limit', 'x-gateway-overhead-ms']) t.ok(exposed.includes(h), `exposes ${h}`);
  const refused = await post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer('sk-wrong'), origin: APP });
  t.equal(refused.status, 401);
  t.equal(refused.headers.get('access-control-allow-origin'), APP, 'an error the app must be able to read');
  const listed = await fetch(gw.url + '/v1/models', { headers: { ...bearer(KEY), origin: APP } });
  t.equal(listed.headers.get('access-control-allow-origin'), APP);
  const other = await post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer(KEY), origin: 'https://evil.example.com' });
  t.equal(other.status, 200, 'served (a non-browser client sends what it likes), but a browser may not read it');
  t.equal(other.headers.get('access-control-allow-origin'), null);
  const admin = await fetch(gw.url + '/admin/usage', { headers: { ...bearer('admin-token-0001-0123456789abcdef'), origin: APP } });
  t.equal(admin.status, 200);
  t.equal(admin.headers.get('access-control-allow-origin'), null, 'never on /admin/*');
});

t.test('"*" allows any origin, without Vary; no origins (the default) answers no preflight', async (t) => {
  const open = await withGateway(t, config('["*"]'));
  const pre = await rawRequest(open.url, { method: 'OPTIONS', path: '/v1/chat/completions', headers: { origin: 'https://anyone.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } });
  t.equal(pre.status, 204);
  t.equal(pre.headers['access-control-allow-origin'], '*');
  t.equal(pre.headers['access-control-allow-headers'], 'authorization', 'authorization is never covered by a wildcard: listed');
  t.equal(pre.headers.vary, undefined);
  const res = await post(open.url + '/v1/chat/completions', chatBody(), { ...bearer(KEY), origin: 'https://anyone.example' });
  t.equal(res.headers.get('access-control-allow-origin'), '*');

  const closed = await withGateway(t, chatConfig({ keyId: 'cors', key: KEY }));
  const none = await rawRequest(closed.url, { method: 'OPTIONS', path: '/v1/chat/completions', headers: { origin: APP, 'access-control-request-method': 'POST' } });
  t.equal(none.status, 405, 'no CORS: OPTIONS is just a method no route takes');
  t.same(corsHeaders(none.headers), {});
});

t.test('an upstream\'s own CORS headers never reach the client', async (t) => {
  const upstream = await import('node:http').then(({ createServer }) => createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-secret' })
      .end(JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
  }));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.teardown(() => upstream.close());
  const port = (upstream.address() as { port: number }).port;
  const relayed = await withGateway(t, chatConfig({ keyId: 'cors', key: KEY, server: `cors: { origins: [${APP}] }`, platform: `{ base_url: "http://127.0.0.1:${port}", format: openai-chat }` }));
  const res = await post(relayed.url + '/v1/chat/completions', chatBody(), { ...bearer(KEY), origin: APP });
  t.equal(res.status, 200);
  t.equal(res.headers.get('access-control-allow-origin'), APP, 'the gateway\'s policy');
  t.notMatch(res.headers.get('access-control-expose-headers') ?? '', /x-secret/);
  const foreign = await post(relayed.url + '/v1/chat/completions', chatBody(), { ...bearer(KEY), origin: 'https://evil.example.com' });
  t.equal(foreign.headers.get('access-control-allow-origin'), null, 'not the upstream\'s "*"');
});

t.test('origins are checked when the config loads', async (t) => {
  const load = (origins: string) => () => parseConfig(config(origins), 'gateway.yaml', { plugins, formats, upstreamAuth, env: {} });
  for (const bad of ['"https://app.example.com/"', '"https://App.example.com"', '"app.example.com"', '"https://app.example.com/path"', '"ftp://app.example.com"', '"https://app.example.com:443"']) {
    let problems: string[] = [];
    try { load(`[${bad}]`)(); } catch (err) { problems = (err as { problems: string[] }).problems; }
    t.match(problems, [/gateway\.yaml:\d+:\d+ server\.cors\.origins\.0: .* is not an origin/], bad);
  }
  t.doesNotThrow(load('["https://app.example.com:8443", "http://[::1]:3000", "*"]'));
  t.same(load('[]')().config.server.cors, { origins: [] });
});
