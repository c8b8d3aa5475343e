// Operations endpoints and the core's own answers: /healthz, /readyz, /metrics, unknown paths, wrong methods, request ids;
// the SIGTERM drain of a real process.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import t from 'tap';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, metricsText, metricValue, post } from '../helpers/http.ts';
import { gatewayProcess } from '../helpers/process.ts';

const gw = await withGateway(t, demoConfig());
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('/healthz and /readyz', async (t) => {
  const health = await fetch(gw.url + '/healthz');
  t.equal(health.status, 200);
  t.match(health.headers.get('content-type'), /^application\/json/);
  t.match(health.headers.get('x-request-id'), UUID);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  t.strictSame(await health.json(), { status: 'ok', version: pkg.version }, 'the version is package.json\'s');
  const ready = await fetch(gw.url + '/readyz');
  t.equal(ready.status, 200);
  t.same(await ready.json(), { status: 'ready' });
});

t.test('/metrics: request counter by route and status class, upstream TTFB, in-flight gauge', async (t) => {
  const ok = '{route="/v1/chat/completions",format="openai-chat",platform="sim",group="main",model="gpt-4o-mini",status_class="2xx"}';
  const refused = '{route="/v1/chat/completions",format="openai-chat",platform="-",group="-",model="-",status_class="4xx"}';
  const ttfb = '{route="/v1/chat/completions",platform="sim",group="main"}';
  const before = await metricsText(gw.url);
  t.equal(metricValue(before, `gateway_requests_total${ok}`), undefined, 'no series before the first request');
  t.equal(metricValue(before, 'gateway_requests_in_flight'), 0);

  t.equal((await post(gw.url + '/v1/chat/completions', chatBody(), bearer('sk-alice-0001'))).status, 200);
  t.equal((await post(gw.url + '/v1/chat/completions', chatBody(), bearer('sk-alice-0001'))).status, 200);
  t.equal((await post(gw.url + '/v1/chat/completions', chatBody())).status, 401);
  t.equal((await post(gw.url + '/v1/chat/completions', chatBody('never-listed-model-xyz'), bearer('sk-alice-0001'))).status, 404);

  const res = await fetch(gw.url + '/metrics');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  const text = await res.text();
  t.equal(metricValue(text, `gateway_requests_total${ok}`), 2);
  t.equal(metricValue(text, `gateway_requests_total${refused}`), 1, 'a refusal before group-check has no platform or group');
  t.equal(metricValue(text, `gateway_request_duration_seconds_count${ok}`), 2);
  t.equal(metricValue(text, `gateway_upstream_ttfb_seconds_count${ttfb}`), 2, 'one TTFB sample per relayed request');
  t.ok(metricValue(text, `gateway_upstream_ttfb_seconds_sum${ttfb}`)! > 0);
  t.equal(metricValue(text, 'gateway_requests_in_flight'), 0);
  t.notMatch(text, 'never-listed-model-xyz', 'a refused model name does not become a label');
  t.notMatch(text, 'sk-alice-0001', 'never the raw key');
  t.notMatch(text, 'alice', 'not even the key id');
});

t.test('unknown path → 404 JSON, wrong method → 405 JSON with Allow', async (t) => {
  const missing = await fetch(gw.url + '/v2/nothing-here');
  t.equal(missing.status, 404);
  t.match(missing.headers.get('content-type'), /^application\/json/);
  const id = missing.headers.get('x-request-id');
  t.match(id, UUID);
  t.same(await missing.json(), { error: { message: 'No route for /v2/nothing-here', type: 'not_found_error', code: 'route_not_found', request_id: id } });

  const wrong = await fetch(gw.url + '/v1/chat/completions', { headers: bearer('sk-alice-0001') });
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.get('allow'), 'POST');
  const body = await wrong.json() as { error: { code: string; message: string } };
  t.equal(body.error.code, 'method_not_allowed');
  t.equal(body.error.message, 'Method GET is not allowed here; use POST');

  const del = await fetch(gw.url + '/v1/models', { method: 'DELETE' });
  t.equal(del.status, 405);
  t.equal(del.headers.get('allow'), 'GET');
  t.equal(gw.simulators.sim.requests.length, 2, 'only the two relayed chats of the metrics test reached the upstream');
});

t.test('x-request-id is always the gateway\'s own; a well-formed client id is echoed as x-client-request-id', async (t) => {
  const kept = await fetch(gw.url + '/healthz', { headers: { 'x-request-id': 'trace.abc-123:4' } });
  t.match(kept.headers.get('x-request-id'), UUID, 'never the client\'s id');
  t.equal(kept.headers.get('x-client-request-id'), 'trace.abc-123:4');
  const codex = await fetch(gw.url + '/healthz', { headers: { 'x-client-request-id': 'codex-42' } });
  t.equal(codex.headers.get('x-client-request-id'), 'codex-42', 'the header Codex CLI names its id in');
  const replaced = await fetch(gw.url + '/healthz', { headers: { 'x-request-id': 'has spaces <and> tags' } });
  t.match(replaced.headers.get('x-request-id'), UUID);
  t.equal(replaced.headers.get('x-client-request-id'), null, 'a malformed client id is not echoed');
  const a = (await fetch(gw.url + '/healthz')).headers.get('x-request-id');
  const b = (await fetch(gw.url + '/healthz')).headers.get('x-request-id');
  t.not(a, b, 'a fresh id per request');
});

/** SIGTERM the process and resolve with its exit code and the milliseconds it took. */
function terminate(child: import('node:child_process').ChildProcess): Promise<{ code: number | null; ms: number }> {
  const start = performance.now();
  const exited = new Promise<{ code: number | null; ms: number }>((resolve) => child.once('exit', (code) => resolve({ code, ms: performance.now() - start })));
  child.kill('SIGTERM');
  return exited;
}

const demoKey = bearer('sk-demo-key');

t.test('SIGTERM: an idle gateway exits at once, kept-alive and never-used connections included', async (t) => {
  const { url, child } = await gatewayProcess(t, 'gateway.yaml');
  for (const stream of [false, false, true]) {
    const res = await post(url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'hi', { stream }), demoKey);
    t.equal(res.status, 200);
    await res.text();
  }
  // A connection opened ahead and never used (a client pool, a browser, a balancer): it held the drain for 10 s.
  const unused = connect(Number(new URL(url).port), '127.0.0.1');
  unused.on('error', () => {});
  await new Promise((resolve) => unused.once('connect', resolve));
  const { code, ms } = await terminate(child);
  t.equal(code, 0);
  t.ok(ms < 1000, `exited ${Math.round(ms)} ms after SIGTERM`);
  unused.destroy();
});

t.test('SIGTERM with a stream in flight: the stream ends whole, then the process exits', async (t) => {
  const { url, child } = await gatewayProcess(t, 'gateway.yaml');
  const res = await post(url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'hi', { stream: true }), { ...demoKey, 'x-simulator-chunk-delay-ms': '60' });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = new TextDecoder().decode((await reader.read()).value);
  const exit = terminate(child);
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += new TextDecoder().decode(r.value);
  const ended = performance.now();
  t.match(text, /data: \[DONE\]\n\n$/, 'the stream reached its end');
  const { code } = await exit;
  t.equal(code, 0);
  const after = performance.now() - ended;
  t.ok(after < 1000, `exited ${Math.round(after)} ms after the stream ended`);
});
