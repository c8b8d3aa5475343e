// Failover and cool-downs in a pool of three on the simulator: one account answers 429 with a reset, one 500; every client
// request still succeeds, the failing accounts get nothing while they cool down and come back by themselves afterwards.
import t from 'tap';
import { metricValue, metricsText } from '../helpers/http.ts';
import { chat, credentialOf, poolConfig, poolGateway, postJson, records, sleep } from './helpers.ts';

const LIMITED = 'sim-fault:status=429;retry-after-ms=1200;times=1';
const BROKEN = 'sim-fault:status=500;times=1';
const HEALTHY = 'healthy-credential';
const ERROR_MS = 600;

// limited and broken (priority 1) are preferred over healthy (priority 2) whenever they are schedulable.
const { gateway } = await poolGateway(t, poolConfig([
  { id: 'limited', credential: LIMITED, priority: 1 },
  { id: 'broken', credential: BROKEN, priority: 1 },
  { id: 'healthy', credential: HEALTHY, priority: 2 },
], `{ error_ms: ${ERROR_MS} }`));
const sim = gateway.simulators.sim;
const upstream = (credential: string) => sim.requests.filter((r) => credentialOf(r) === credential);

interface Sent { id: string; status: number; at: number; content?: string }
const sent: Sent[] = [];
let n = 0;
async function ask(): Promise<Sent> {
  const id = `failover-${++n}`;
  const at = Date.now();
  const res = await postJson(gateway, '/v1/chat/completions', chat(`request ${n}`), { 'x-request-id': id });
  const body = await res.json() as { choices?: { message: { content: string } }[] };
  const s = { id, status: res.status, at, content: body.choices?.[0].message.content };
  sent.push(s);
  return s;
}

/** Ask until `credential` served a request successfully (it came back), at most `ms`. */
async function askUntilServedBy(credential: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const before = upstream(credential).length;
    await ask();
    if (upstream(credential).length > before) return true;
    await sleep(25);
  }
  return false;
}

const state = (text: string, account: string, s: string) => metricValue(text, `gateway_account_state{group="pool",account="${account}",state="${s}"}`);

t.test('the first request fails over twice and succeeds; the record lists every attempt', async (t) => {
  const first = await ask();
  t.equal(first.status, 200);
  t.equal(first.content, 'Echo: request 1');
  t.equal(upstream(LIMITED).length, 1, 'limited was tried once');
  t.equal(upstream(BROKEN).length, 1, 'broken was tried once');
  t.equal(upstream(HEALTHY).length, 1, 'healthy served it');
  const record = (await records(gateway)).find((r) => r.client_request_id === first.id)!;
  t.equal(record.account, 'healthy');
  t.equal(record.status, 200);
  t.equal(record.attempts.length, 3);
  // limited and broken tie on priority, so either may have been tried first.
  t.same([...record.attempts.slice(0, 2)].sort((a: any, b: any) => a.account.localeCompare(b.account)), [
    { account: 'broken', status: 500, reason: 'upstream_error' },
    { account: 'limited', status: 429, reason: 'rate_limited' },
  ]);
  t.same(record.attempts[2], { account: 'healthy', status: 200, reason: 'ok' });
  const m = await metricsText(gateway.url);
  t.equal(state(m, 'limited', 'cooling'), 1, 'limited is cooling down');
  t.equal(state(m, 'broken', 'cooling'), 1, 'broken is cooling down');
  t.equal(state(m, 'healthy', 'available'), 1);
  t.equal(metricValue(m, 'gateway_failovers_total{group="pool",reason="rate_limited"}'), 1);
  t.equal(metricValue(m, 'gateway_failovers_total{group="pool",reason="upstream_error"}'), 1);
});

t.test('while they cool down, the failing accounts get nothing; afterwards they come back by themselves', async (t) => {
  for (let i = 0; i < 4; i++) t.equal((await ask()).status, 200);
  const failedAt = upstream(BROKEN)[0].at;
  // After the first request's three attempts, until broken's cool-down ends (limited's lasts longer).
  const cooling = sim.requests.slice(3).filter((r) => r.at < failedAt + ERROR_MS - 5);
  t.ok(cooling.length >= 1, `${cooling.length} requests while both cooled down`);
  t.ok(cooling.every((r) => credentialOf(r) === HEALTHY), 'all of them served by healthy');

  t.ok(await askUntilServedBy(BROKEN, 3000), 'broken serves again after its cool-down (error_ms)');
  t.ok(await askUntilServedBy(LIMITED, 3000), 'limited serves again after the reset it announced');
  t.ok(sent.every((s) => s.status === 200), `all ${sent.length} client requests succeeded`);

  const [limitedFail, ...limitedLater] = upstream(LIMITED);
  const [brokenFail, ...brokenLater] = upstream(BROKEN);
  const limitedBack = limitedLater[0].at - limitedFail.at;
  const brokenBack = brokenLater[0].at - brokenFail.at;
  t.ok(limitedBack >= 1200 - 5, `limited came back ${limitedBack} ms after its 429 (reset announced: 1200 ms)`);
  t.ok(brokenBack >= ERROR_MS - 5, `broken came back ${brokenBack} ms after its 500 (error_ms ${ERROR_MS})`);
  t.ok(brokenBack < limitedBack, 'the 500 cool-down (error_ms) ended before the announced 429 reset');
  t.ok(limitedBack < 1200 + 1500, 'limited did not stay out much longer than its reset');
  t.comment(`figures: ${sent.length} requests, all 200; limited back after ${limitedBack} ms (reset 1200 ms), broken after ${brokenBack} ms (error_ms ${ERROR_MS})`);

  const m = await metricsText(gateway.url);
  for (const account of ['limited', 'broken', 'healthy']) t.equal(state(m, account, 'available'), 1, `${account} available`);
  t.equal(metricValue(m, 'gateway_upstream_attempts_total{group="pool",account="limited",reason="rate_limited"}'), 1);
  t.ok(metricValue(m, 'gateway_upstream_attempts_total{group="pool",account="limited",reason="ok"}')! >= 1);
  t.ok(metricValue(m, 'gateway_account_selections_total{group="pool",account="healthy"}')! >= 5);
});
