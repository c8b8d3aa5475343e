// The console's admin routes over HTTP after real traffic through the simulator, on the store given: the usage summary
// (its numbers equal the records'), groups, accounts (state, failures, failovers), the account test, record filters and
// key status as /v1/usage computes it. Run on the embedded store and on Redis (overview*.test.ts).
import type { Test } from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { admin, chat, eventually, issue } from './helpers.ts';

export const overviewConfig = (store: string) => `
server: { host: 127.0.0.1, port: 0, body_limit: 64kb }
${store}
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  sim: { simulator: true }
  sim-anthropic: { simulator: true, format: anthropic-messages }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini, "gpt-5*"]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
      - { id: sim-off, credential: "" }
  flaky:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: flaky-1, credential: "sim-fault:status=429;retry-after=60;times=1", priority: 1 }
      - { id: flaky-2, credential: upstream-credential-2, priority: 2, concurrency: 3 }
      - { id: refused, credential: "sim-fault:status=401", priority: 9 }
      - { id: hangs, credential: "sim-fault:hang", priority: 9 }
  claude:
    platform: sim-anthropic
    models: ["claude-*"]
    accounts:
      - { id: sim-1, credential: claude-credential }
keys:
  - { id: alice, key: sk-alice-0001, group: main }
  - { id: bob, key: sk-bob-0002, group: flaky }
pricing:
  gpt-4o-mini: { input: 1000, output: 2000 }
  "gpt-5*": { input: 3000, output: 4000 }
routes:
  extends: default
  add:
    - { method: POST, path: "/admin/accounts/{id}/quick-test", format: gateway, pipeline: [admin-auth, { admin-accounts: { action: test, timeout_ms: 300 } }] }
`;

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;

export async function overviewSuite(t: Test, store: string): Promise<void> {
  const gw = await withGateway(t, overviewConfig(store));
  const tiny = await issue(gw, { group: 'main', name: 'tiny', limits: { quota_usd: 0.001 } });
  const statuses = [
    await chat(gw, 'sk-alice-0001'), await chat(gw, 'sk-alice-0001', 'gpt-5'), await chat(gw, tiny.key),
    await chat(gw, 'sk-bob-0002'), // flaky-1 answers 429 once: the request moves to flaky-2
  ];
  const failing = await post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer('sk-alice-0001'), 'x-simulator-fault': 'status=500' });
  statuses.push(failing.status);
  await failing.arrayBuffer();
  const records: any[] = (await eventually(() => admin(gw, 'GET', '/admin/usage'), (r) => r.body.records.length >= 5)).body.records;

  t.test('the traffic', async (t) => {
    t.same(statuses, [200, 200, 200, 200, 502]);
    t.equal(records.length, 5);
  });

  t.test('summary: every split adds up to the records, per bucket and in total', async (t) => {
    for (const by of ['model', 'group', 'key']) {
      const res = await admin(gw, 'GET', `/admin/usage/summary?window=1h&by=${by}`);
      t.equal(res.status, 200, by);
      const s = res.body;
      t.match(s, { window: '1h', by, unit: 'minute' });
      t.equal(s.buckets.length, 60, 'sixty minutes');
      t.equal(s.buckets[59] % 60_000, 0);
      t.ok(Date.now() - s.buckets[59] < 60_000, 'the last bucket is the current minute');
      const field = { model: 'model', group: 'group', key: 'key_id' }[by]!;
      const names = [...new Set(records.map((r) => r[field]))].sort();
      t.same(s.series.map((x: any) => x.name).sort(), names, `one series per ${by}`);
      for (const x of s.series) {
        const mine = records.filter((r) => r[field] === x.name);
        t.equal(sum(x.requests), mine.length, `${by} ${x.name}: requests`);
        t.equal(sum(x.errors), mine.filter((r) => r.status >= 400).length, `${by} ${x.name}: errors`);
        t.equal(sum(x.tokens), sum(mine.map((r) => r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens)), `${by} ${x.name}: tokens`);
        t.ok(close(x.totals.cost, sum(mine.map((r) => r.cost))), `${by} ${x.name}: cost`);
        for (const [i, start] of s.buckets.entries()) {
          const inBucket = mine.filter((r) => r.time >= start && r.time < start + 60_000).length;
          t.equal(x.requests[i], inBucket, `${by} ${x.name}: requests in minute ${i}`);
        }
      }
      t.match(s.totals, { requests: 5, errors: 1, error_rate: 0.2 });
      t.ok(close(s.totals.cost, sum(records.map((r) => r.cost))), 'total cost');
    }
  });

  t.test('summary: windows, top and bad queries', async (t) => {
    const day = (await admin(gw, 'GET', '/admin/usage/summary?window=1d')).body;
    t.match(day, { window: '1d', by: 'model', unit: 'hour' });
    t.equal(day.buckets.length, 24);
    t.equal(day.totals.requests, 5);
    t.equal((await admin(gw, 'GET', '/admin/usage/summary?window=7d')).body.buckets.length, 168);
    const month = (await admin(gw, 'GET', '/admin/usage/summary?window=30d&by=group')).body;
    t.match(month, { unit: 'day', totals: { requests: 5 } });
    t.equal(month.buckets.length, 30);
    const top = (await admin(gw, 'GET', '/admin/usage/summary?window=1h&by=key&top=1')).body;
    t.equal(top.series.length, 2, 'the busiest key, and the rest summed');
    t.match(top.series[0], { name: 'alice', totals: { requests: 3 } });
    t.match(top.series[1], { name: '2 more', other: true, totals: { requests: 2 } });
    t.notOk('label' in top.series[1], 'the rest summed has no key name');
    // By key, a named key's series carries its name; a config key (no name) and other splits carry none.
    const byKey = (await admin(gw, 'GET', '/admin/usage/summary?window=1h&by=key')).body;
    t.same(Object.fromEntries(byKey.series.map((x: any) => [x.name, x.label ?? null])), { alice: null, bob: null, [tiny.record.id]: 'tiny' });
    t.notOk(day.series.some((x: any) => 'label' in x), 'by model: no labels');
    for (const [query, code] of [['window=2h', 'invalid_window'], ['by=account', 'invalid_by'], ['top=0', 'invalid_top']]) {
      const bad = await admin(gw, 'GET', `/admin/usage/summary?${query}`);
      t.equal(bad.status, 400, query);
      t.equal(bad.body.error.code, code);
    }
    t.equal((await admin(gw, 'GET', '/admin/usage/summary', undefined, null)).status, 401, 'the admin token is required');
  });

  t.test('groups: every group of gateway.yaml', async (t) => {
    const { body } = await admin(gw, 'GET', '/admin/groups');
    t.same(body.groups.map((g: any) => g.name), ['main', 'flaky', 'claude']);
    t.match(body.groups[0], { name: 'main', platform: 'sim', dedicated: false, models: ['gpt-4o-mini', 'gpt-5*'], accounts: 2, enabled_accounts: 1 });
  });

  t.test('accounts: state, slots, failures by reason and failovers', async (t) => {
    const { status, body } = await admin(gw, 'GET', '/admin/accounts');
    t.equal(status, 200);
    t.equal(body.window, '1d');
    const acct = (group: string, id: string) => body.groups.find((g: any) => g.name === group).accounts.find((a: any) => a.id === id);
    t.match(acct('main', 'sim-1'), { state: 'ready', in_flight: 0, concurrency: null, failures_total: 1, failures: { upstream_error: 1 }, failovers: 0, test_model: 'gpt-4o-mini' });
    t.match(acct('main', 'sim-off'), { state: 'disabled' });
    const flaky = acct('flaky', 'flaky-1');
    t.match(flaky, { state: 'cooling', cooldown_reason: 'rate_limited', failures: { rate_limited: 1 }, failures_total: 1, failovers: 1 });
    t.ok(Date.parse(flaky.cooling_until) > Date.now(), 'cooling until a time to come');
    t.match(acct('flaky', 'flaky-2'), { state: 'ready', concurrency: 3, failures_total: 0, failovers: 0 });
    t.ok(acct('flaky', 'flaky-2').last_used, 'last used');
    t.match(acct('claude', 'sim-1'), { test_model: null }, 'a group of patterns only has no default test model');
    // The answer may say an account has no credential; it never holds one (every credential of overviewConfig).
    for (const secret of ['upstream-credential-1', 'upstream-credential-2', 'sim-fault:', 'claude-credential']) t.notMatch(JSON.stringify(body), secret, `no credential in the answer (${secret})`);
    t.match(acct('main', 'sim-off'), { state: 'disabled', disabled: { reason: 'no_credential', variables: [] } }, 'why sim-off is disabled');
  });

  t.test('account test: one tiny request through that account, billed to no key', async (t) => {
    const sim = gw.simulators.sim.url;
    await fetch(sim + '/_simulator/requests', { method: 'DELETE' });
    const res = await admin(gw, 'POST', '/admin/accounts/flaky-2/test');
    t.equal(res.status, 200);
    t.match(res.body, { group: 'flaky', account: 'flaky-2', format: 'openai-chat', model: 'gpt-4o-mini', path: '/v1/chat/completions', ok: true, status: 200, message: null });
    t.type(res.body.duration_ms, 'number');
    const seen = await (await fetch(sim + '/_simulator/requests')).json() as any[];
    t.equal(seen.length, 1, 'one request upstream');
    t.equal(seen[0].headers.authorization, 'Bearer upstream-credential-2', 'with that account\'s credential');
    t.same(JSON.parse(seen[0].body), { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }], max_completion_tokens: 1 });
    await new Promise((r) => setTimeout(r, 100));
    t.equal((await admin(gw, 'GET', '/admin/usage')).body.records.length, 5, 'no usage record');
    t.equal((await admin(gw, 'GET', '/admin/usage/summary?window=1h')).body.totals.requests, 5, 'not in the summary');

    const refused = await admin(gw, 'POST', '/admin/accounts/refused/test', { model: 'gpt-4o-mini' });
    t.match(refused.body, { account: 'refused', ok: false, status: 401 });
    t.type(refused.body.message, 'string');
    t.notMatch(refused.body.message, /sim-fault/, 'the credential is never echoed');

    const hangs = await admin(gw, 'POST', '/admin/accounts/hangs/quick-test');
    t.match(hangs.body, { account: 'hangs', ok: false, status: 0, message: 'No answer within 300 ms' });
    t.ok(hangs.body.duration_ms < 2000, `time-bounded (${hangs.body.duration_ms} ms)`);

    const anthropic = gw.simulators['sim-anthropic'].url;
    await fetch(anthropic + '/_simulator/requests', { method: 'DELETE' });
    const claude = await admin(gw, 'POST', '/admin/accounts/sim-1/test', { group: 'claude', model: 'claude-haiku-4-5' });
    t.match(claude.body, { group: 'claude', format: 'anthropic-messages', path: '/v1/messages', ok: true, status: 200 });
    const [probe] = await (await fetch(anthropic + '/_simulator/requests')).json() as any[];
    t.equal(probe.headers['x-api-key'], 'claude-credential');
    t.equal(probe.headers['anthropic-version'], '2023-06-01');
    t.same(JSON.parse(probe.body), { model: 'claude-haiku-4-5', max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });

    const errors: [string, unknown, number, string][] = [
      ['/admin/accounts/sim-1/test', undefined, 409, 'ambiguous_account'],
      ['/admin/accounts/sim-1/test', { group: 'claude' }, 400, 'model_required'],
      ['/admin/accounts/nobody/test', undefined, 404, 'account_not_found'],
      ['/admin/accounts/sim-off/test', undefined, 409, 'account_without_credential'],
      ['/admin/accounts/flaky-2/test', { model: 'x', extra: 1 }, 400, 'invalid_body'],
    ];
    for (const [path, body, status, code] of errors) {
      const r = await admin(gw, 'POST', path, body);
      t.equal(r.status, status, `${path} ${JSON.stringify(body)}`);
      t.equal(r.body.error.code, code);
    }
  });

  t.test('records: filtered by status and ending', async (t) => {
    const ids = async (q: string) => (await admin(gw, 'GET', `/admin/usage?${q}`)).body.records.map((r: any) => r.request_id);
    t.same(await ids('status=5xx'), records.filter((r) => r.status >= 500).map((r) => r.request_id));
    t.same(await ids('status=502'), records.filter((r) => r.status === 502).map((r) => r.request_id));
    t.same(await ids('ending=failed'), records.filter((r) => r.ending === 'failed').map((r) => r.request_id));
    t.same(await ids('status=2xx&key=alice'), records.filter((r) => r.status === 200 && r.key_id === 'alice').map((r) => r.request_id));
    const detail = records.find((r) => r.key_id === 'bob');
    t.same(detail.attempts.map((a: any) => [a.account, a.status, a.reason]), [['flaky-1', 429, 'rate_limited'], ['flaky-2', 200, 'ok']], 'a record keeps its attempts');
    for (const q of ['status=abc', 'status=600', 'ending=nope']) t.equal((await admin(gw, 'GET', `/admin/usage?${q}`)).status, 400, q);
  });

  t.test('keys: status as /v1/usage computes it, spend, last use', async (t) => {
    const { body } = await admin(gw, 'GET', '/admin/keys');
    const tinyView = body.keys.find((k: any) => k.id === tiny.record.id);
    const usage = await (await fetch(gw.url + '/v1/usage', { headers: bearer(tiny.key) })).json() as any;
    t.equal(usage.status, 'quota_exhausted');
    t.match(tinyView, { status: 'quota_exhausted', usable: false, quota: usage.quota, today: { requests: 1 } });
    t.ok(close(tinyView.spent, usage.usage.total.cost));
    const mine = records.filter((r) => r.key_id === tiny.record.id);
    t.equal(tinyView.last_used, new Date(mine[0].time).toISOString());
    t.match(body.keys.find((k: any) => k.id === 'bob'), { status: 'active', usable: true, quota: null, rate_limits: [] });
    const off = await admin(gw, 'PATCH', `/admin/keys/${tiny.record.id}`, { disabled: true });
    t.match(off.body, { status: 'disabled', usable: false });
  });
}
