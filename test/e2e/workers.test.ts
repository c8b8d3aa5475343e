// `workers: 2`: the requests spread over two worker processes (a connection each, handed out in turn by the primary),
// and every scrape of /metrics, whichever worker takes it, reports the whole cluster's counts (summed by the primary;
// without that, each scrape showed one worker's half), while gauges read from shared state are not doubled.
import { request } from 'node:http';
import t from 'tap';
import { chatConfig, writeConfig } from '../helpers/gateway.ts';
import { gatewayProcess } from '../helpers/process.ts';

const REQUESTS = 20;

/** One request on a connection of its own (no keep-alive), so the primary hands each to the next worker. */
function chat(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there, world!' }] });
    const req = request(`${url}/v1/chat/completions`, {
      method: 'POST', agent: false,
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-workers-0001', 'content-length': Buffer.byteLength(body) },
    }, (res) => { res.resume(); res.once('end', () => resolve(res.statusCode ?? 0)); });
    req.once('error', reject);
    req.end(body);
  });
}

/** The sum of every series of a metric in a scrape. */
const total = (text: string, name: string): number => text.split('\n')
  .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
  .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

t.test('two workers: /metrics counts every worker\'s requests', async (t) => {
  const config = writeConfig(chatConfig({
    keyId: 'workers', key: 'sk-workers-0001', server: 'workers: 2', chain: 'auth, group-check, model-allowlist, proxy',
  }));
  const { url } = await gatewayProcess(t, config);
  const statuses = [];
  for (let i = 0; i < REQUESTS; i++) statuses.push(await chat(url));
  t.strictSame(statuses, Array(REQUESTS).fill(200));
  const scrapes = [];
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${url}/metrics`, { headers: { connection: 'close' } });
    t.equal(res.status, 200);
    scrapes.push(await res.text());
  }
  for (const [i, text] of scrapes.entries()) {
    t.equal(total(text, 'gateway_requests_total'), REQUESTS, `scrape ${i + 1}: ${REQUESTS} requests in all`);
    t.equal(total(text, 'gateway_account_state'), 1, `scrape ${i + 1}: the one account is in one state, not one per worker`);
  }
});
