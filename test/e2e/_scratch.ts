import { withGateway, demoConfig } from '../helpers/gateway.ts';
import { request } from 'node:http';
const teard: Array<() => unknown> = [];
const gw = await withGateway({ teardown: (f) => teard.push(f) }, demoConfig());
const sim = gw.simulators.sim;
sim.clear();
await new Promise<void>((resolve) => {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  const u = new URL(gw.url);
  const rq = request({ host: u.hostname, port: u.port, method: 'POST', path: '/v1/chat/completions?beta=true&alt=sse', headers: { connection: 'keep-alive, x-hop-custom', 'x-hop-custom': '1', 'keep-alive': 'timeout=5', te: 'trailers',  'proxy-connection': 'keep-alive', 'proxy-authorization': 'Basic abc', cookie: 'a=b', authorization: 'Bearer sk-alice-0001', 'x-api-key': 'sk-alice-0001', 'x-goog-api-key': 'sk-alice-0001', 'api-key': 'sk-alice-0001', 'anthropic-beta': 'foo-2025', 'anthropic-version': '2023-06-01', 'accept-encoding': 'gzip, br', 'x-forwarded-for': '1.2.3.4', forwarded: 'for=1.2.3.4', 'x-request-id': 'client-req-1', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => { let t=''; res.on('data', c=>t+=c); res.on('end', () => { console.log('hop', res.statusCode, res.headers, t.slice(0,100)); resolve(); }); });
  rq.end(body);
});
console.log(JSON.stringify(sim.requests.map(r => [r.path, r.headers])));
// disconnect mid-stream
const ac = new AbortController();
const t0 = Date.now();
const r = await fetch(gw.url + '/v1/chat/completions', { method: 'POST', signal: ac.signal, headers: { authorization: 'Bearer sk-alice-0001', 'content-type': 'application/json', 'x-simulator-chunk-delay-ms': '200' }, body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'one two three four five six' }] }) });
const rd = r.body!.getReader();
const first = await rd.read();
console.log('first', Date.now() - t0, new TextDecoder().decode(first.value).slice(0, 60));
ac.abort();
for (let i = 0; i < 20; i++) { const m = await (await fetch(gw.url + '/metrics')).text(); const l = m.split('\n').find(x => x.startsWith('gateway_requests_in_flight ')); console.log(Date.now() - t0, l); if (l === 'gateway_requests_in_flight 0') break; await new Promise(r => setTimeout(r, 20)); }
for (const f of teard) await f();
