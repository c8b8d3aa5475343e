// CORS in headless Chromium: a page served from another origin calls the gateway with fetch. From an origin in
// server.cors.origins it reads answers, errors and the exposed headers; from any other origin, and on /admin/*, the
// browser refuses (the preflight gets no CORS headers, so the request itself is never sent).
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { launch, openPage } from './chromium.ts';

const browser = await launch(t);
if (browser) {
  /** A server of one blank page: the origin the page's scripts run in. */
  const app = async (): Promise<{ server: Server; origin: string }> => {
    const server = createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title><p>app</p>'); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise((resolve) => server.close(resolve)));
    return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  const allowed = await app();
  const other = await app();
  const KEY = 'sk-browser-0001';
  const gw = await withGateway(t, chatConfig({
    keyId: 'browser', key: KEY, limits: 'rpm: 4', server: `cors: { origins: ["${allowed.origin}"] }`,
    routes: `  - { method: GET, path: /v1/models, format: openai-chat, pipeline: [auth, list-models] }
  - { method: GET, path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
`,
  }).replace('pricing:', 'admin: { token: admin-token-0001-0123456789abcdef }\npricing:'));
  const sim = gw.simulators.upstream;

  /** fetch from inside the page: what its script can read of the answer, or the error the browser raised. */
  const call = (page: Page, path: string, init: { method?: string; headers?: Record<string, string>; body?: string }) =>
    page.evaluate(async ({ url, init }) => {
      try {
        const res = await fetch(url, init);
        const read = (name: string) => res.headers.get(name);
        return { status: res.status, requestId: read('x-request-id'), overhead: read('x-gateway-overhead-ms'), limit: read('x-gateway-limit'), retryAfter: read('retry-after'), body: await res.json() };
      } catch (err) {
        return { error: String(err) };
      }
    }, { url: gw.url + path, init });
  const chat = (key: string) => ({
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] }),
  });

  t.test('from an allowed origin: answers, errors and the exposed headers are readable', async (t) => {
    const { page } = await openPage(browser, allowed.origin + '/');
    const ok = await call(page, '/v1/chat/completions', chat(KEY)) as Record<string, any>;
    t.equal(ok.status, 200);
    t.equal(ok.body.choices[0].message.content, 'Echo: Hello there');
    t.match(ok.requestId, /^[0-9a-f-]{36}$/, 'x-request-id exposed');
    t.match(ok.overhead, /^\d+(\.\d+)?$/, 'x-gateway-overhead-ms exposed');
    t.equal(sim.requests.filter((r) => r.path === '/v1/chat/completions').length, 1);

    const listed = await call(page, '/v1/models', { headers: { authorization: `Bearer ${KEY}` } }) as Record<string, any>;
    t.same(listed.body.data.map((m: { id: string }) => m.id), ['gpt-4o-mini'], 'a GET with a credential header (preflighted)');

    const wrong = await call(page, '/v1/chat/completions', chat('sk-wrong')) as Record<string, any>;
    t.equal(wrong.status, 401);
    t.equal(wrong.body.error.code, 'INVALID_API_KEY', 'the gateway\'s error is readable');

    // rpm 4: the fifth chat of the minute is refused, and the script sees why.
    const statuses: number[] = [];
    let over: Record<string, any> = {};
    for (let i = 0; i < 4; i++) {
      over = await call(page, '/v1/chat/completions', chat(KEY)) as Record<string, any>;
      statuses.push(over.status);
    }
    t.same(statuses, [200, 200, 200, 429]);
    t.equal(over.limit, 'rpm', 'x-gateway-limit exposed');
    t.match(over.retryAfter, /^\d+$/, 'retry-after exposed');
  });

  t.test('from another origin, and on /admin/*: the browser refuses, and nothing reaches the upstream', async (t) => {
    const before = sim.requests.length;
    const { page, errors } = await openPage(browser, other.origin + '/');
    const refused = await call(page, '/v1/chat/completions', chat(KEY));
    t.match(refused, { error: /TypeError: Failed to fetch/ });
    t.equal(sim.requests.length, before, 'the preflight failed, so the POST was never sent');
    t.match(errors.join('\n'), /blocked by CORS policy/, 'the browser says why');

    const fromAllowed = await openPage(browser, allowed.origin + '/');
    const admin = await call(fromAllowed.page, '/admin/usage', { headers: { authorization: 'Bearer admin-token-0001-0123456789abcdef' } });
    t.match(admin, { error: /TypeError: Failed to fetch/ }, 'the admin API is never cross-origin');
  });
}
