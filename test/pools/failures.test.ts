// How the pool classifies and answers failures: connect failures and header timeouts fail over; a refused credential
// needs attention (a log line naming the account, never the credential, and a metric); when every account is rate
// limited the client gets the soonest retry time; no account for the model is a 503; a 400 passes through as is; an
// account's model_map renames the model it is sent.
import t from 'tap';
import { BAD_CREDENTIAL } from '../../simulator/server.ts';
import { metricValue, metricsText } from '../helpers/http.ts';
import { chat, credentialOf, poolConfig, poolGateway, postJson, records } from './helpers.ts';

t.test('a refused connection and a header timeout move the request on; the accounts cool down (unreachable_ms)', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig([
    { id: 'dead', credential: 'dead-credential', priority: 1, base_url: 'http://127.0.0.1:1' },
    { id: 'hanging', credential: 'sim-fault:hang', priority: 2 },
    { id: 'healthy', credential: 'healthy-credential', priority: 3 },
  ], '{ header_timeout_ms: 300, unreachable_ms: 60000 }'));
  const sim = gateway.simulators.sim;
  const start = Date.now();
  const res = await postJson(gateway, '/v1/chat/completions', chat(), { 'x-request-id': 'unreachable-1' });
  const elapsed = Date.now() - start;
  t.equal(res.status, 200);
  t.ok(elapsed >= 290 && elapsed < 2000, `answered after ${elapsed} ms: one header timeout (300 ms) on the way`);
  t.same(sim.requests.map(credentialOf), ['sim-fault:hang', 'healthy-credential'], 'the simulator saw the hanging attempt, then the healthy one');
  const record = (await records(gateway)).find((r) => r.client_request_id === 'unreachable-1')!;
  t.same(record.attempts, [
    { account: 'dead', status: 0, reason: 'unreachable' },
    { account: 'hanging', status: 0, reason: 'timeout' },
    { account: 'healthy', status: 200, reason: 'ok' },
  ]);

  t.equal((await postJson(gateway, '/v1/chat/completions', chat(), { 'x-request-id': 'unreachable-2' })).status, 200);
  const next = (await records(gateway)).find((r) => r.client_request_id === 'unreachable-2')!;
  t.same([next.account, next.attempts], ['healthy', undefined], 'the next request goes straight to the healthy account');
  t.equal(sim.requests.length, 3, 'nothing more for the cooling hanging account');
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_account_state{group="pool",account="dead",state="cooling"}'), 1);
  t.equal(metricValue(m, 'gateway_account_state{group="pool",account="hanging",state="cooling"}'), 1);
});

t.test('a refused credential: failover, a warning naming the account (not the credential), needs_attention', async (t) => {
  const { gateway, logs } = await poolGateway(t, poolConfig([
    { id: 'revoked', credential: BAD_CREDENTIAL, priority: 1 },
    { id: 'healthy', credential: 'healthy-credential', priority: 2 },
  ]));
  const res = await postJson(gateway, '/v1/chat/completions', chat(), { 'x-request-id': 'auth-1' });
  t.equal(res.status, 200);
  const warning = logs.find((l) => l.level === 'warn' && l.account === 'revoked');
  t.ok(warning, 'a warning names the account');
  t.match(warning?.msg, /"revoked".*needs attention/);
  t.notOk(logs.some((l) => JSON.stringify(l).includes(BAD_CREDENTIAL)), 'no log line carries the credential');
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_account_needs_attention_total{group="pool",account="revoked"}'), 1);
  t.equal(metricValue(m, 'gateway_account_state{group="pool",account="revoked",state="needs_attention"}'), 1);
  t.equal(metricValue(m, 'gateway_account_state{group="pool",account="healthy",state="available"}'), 1);
  const record = (await records(gateway)).find((r) => r.client_request_id === 'auth-1')!;
  t.same(record.attempts[0], { account: 'revoked', status: 401, reason: 'auth' });
  const check = gateway.simulators.sim.requests.find((r) => r.method === 'GET');
  t.match(check, { path: '/v1/models', body: '' }, 'the credential was checked alone, before the account was paused');
  t.equal(credentialOf(check!), BAD_CREDENTIAL);

  // With the healthy account gone from the group, nothing is left: 503 NO_ACCOUNT_AVAILABLE.
  const { gateway: alone } = await poolGateway(t, poolConfig([{ id: 'revoked', credential: BAD_CREDENTIAL }]));
  const refused = await postJson(alone, '/v1/chat/completions', chat());
  t.equal(refused.status, 503);
  t.same(await refused.json(), { error: { message: 'No upstream account of group "pool" is available: every account needs attention from the operator', type: 'server_error', param: null, code: 'NO_ACCOUNT_AVAILABLE' } });
  t.same(alone.simulators.sim.requests.map((r) => r.method), ['POST', 'GET'], 'the request, then the credential check');
  const next = await postJson(alone, '/v1/chat/completions', chat());
  t.equal(next.status, 503, 'the account rests (auth_pause_ms): the next request is refused at once');
  t.equal(alone.simulators.sim.requests.length, 2, 'and never reaches the upstream');
});

t.test('every account rate limited: 429 ALL_ACCOUNTS_RATE_LIMITED with the soonest reset, then no upstream call', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig([
    { id: 'a', credential: 'sim-fault:status=429;retry-after=7' },
    { id: 'b', credential: 'sim-fault:status=429;retry-after=4' },
  ]));
  const sim = gateway.simulators.sim;
  const res = await postJson(gateway, '/v1/chat/completions', chat());
  t.equal(res.status, 429);
  t.equal(res.headers.get('retry-after'), '4', 'the soonest of the two resets');
  const body = await res.json() as { error: Record<string, unknown> };
  t.same(body.error, { message: 'Every upstream account of group "pool" is rate limited; retry after 4 s', type: 'rate_limit_error', param: null, code: 'ALL_ACCOUNTS_RATE_LIMITED' });
  t.notMatch(JSON.stringify(body), /Simulated|sim-fault/, 'no upstream text, no credential');
  t.equal(sim.requests.length, 2, 'both accounts were tried');
  const again = await postJson(gateway, '/v1/chat/completions', chat());
  t.equal(again.status, 429);
  t.ok(Number(again.headers.get('retry-after')) <= 4);
  t.equal(sim.requests.length, 2, 'while both cool down, nothing goes upstream');
});

t.test('no account serves the model: 503 NO_ACCOUNT_AVAILABLE; an account model_map renames what it is sent', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig([
    { id: 'five', credential: 'five-credential', models: ['gpt-5*'] },
    { id: 'mapped', credential: 'mapped-credential', models: ['claude-*'], model_map: { 'gpt-4.1': 'gpt-5-mini' } },
  ]));
  const sim = gateway.simulators.sim;
  const none = await postJson(gateway, '/v1/chat/completions', chat());
  t.equal(none.status, 503);
  t.same(await none.json(), { error: { message: 'No enabled upstream account of group "pool" serves the model "gpt-4o-mini"', type: 'server_error', param: null, code: 'NO_ACCOUNT_AVAILABLE' } });
  t.equal(sim.requests.length, 0);

  const mapped = await postJson(gateway, '/v1/chat/completions', { ...chat(), model: 'gpt-4.1' });
  t.equal(mapped.status, 200);
  t.equal((await mapped.json() as { model: string }).model, 'gpt-4.1', 'the client sees the model it asked for');
  t.equal(credentialOf(sim.requests[0]), 'mapped-credential', 'only the account mapping gpt-4.1 serves it');
  t.equal((sim.requests[0].json as { model: string }).model, 'gpt-5-mini', 'sent as the account\'s model');

  const five = await postJson(gateway, '/v1/chat/completions', { ...chat(), model: 'gpt-5' });
  t.equal(five.status, 200);
  t.equal(credentialOf(sim.requests[1]), 'five-credential');
  t.equal(sim.requests[1].body, JSON.stringify({ ...chat(), model: 'gpt-5' }), 'an unmapped account gets the original bytes');
});

t.test('a 400 does not fail over: it passes through verbatim from the first account', async (t) => {
  const { gateway } = await poolGateway(t, poolConfig([
    { id: 'picky', credential: 'sim-fault:status=400', priority: 1 },
    { id: 'healthy', credential: 'healthy-credential', priority: 2 },
  ]));
  const res = await postJson(gateway, '/v1/chat/completions', chat());
  t.equal(res.status, 400);
  t.same(await res.json(), { error: { message: 'Simulated upstream error (status 400).', type: 'invalid_request_error', param: null, code: null } });
  t.equal(gateway.simulators.sim.requests.length, 1, 'one attempt');
});
