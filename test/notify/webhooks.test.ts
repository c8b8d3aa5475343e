// Webhooks against a receiver the test starts on 127.0.0.1 (embedded store): a key crossing 80 % and 100 % of its quota
// and of a window, an account needing attention and a group exhausted, each sent once and signed (checked the way an
// operator's receiver would); a receiver that fails first (retried), one that never answers (bounded), a full queue
// (dropped and counted), the console's list, and a request never waiting for any of it.
import { writeFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { BAD_CREDENTIAL } from '../../simulator/server.ts';
import { startGateway } from '../../app/gateway.ts';
import { createLogger } from '../../core/log.ts';
import { testEnv, withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { metricValue, metricsText } from '../helpers/http.ts';
import { receiver, verifySignature, type Received } from '../helpers/receiver.ts';
import { admin, eventually } from '../admin/helpers.ts';
import { chat, COST, hookConfig, KEY, SECRET, sleep } from './helpers.ts';

/** Nothing a receiver gets may hold a secret: the webhook's, a key's, an upstream credential, the URL's own token. */
function clean(t: Test, r: Received): void {
  const all = JSON.stringify(r.headers) + r.body;
  for (const secret of [SECRET, KEY, BAD_CREDENTIAL, 'receiver-own-token', 'upstream-credential-1']) t.notOk(all.includes(secret), `no ${secret} in what was sent`);
}

function signed(t: Test, r: Received): void {
  t.ok(verifySignature(SECRET, r.body, r.headers['x-gateway-signature']), 'the signature verifies with the shared secret');
  t.notOk(verifySignature('another-secret-0123456789', r.body, r.headers['x-gateway-signature']), 'and not with another');
  t.equal(r.headers['x-gateway-delivery'], r.json.id, 'the delivery header names the event id');
  t.equal(r.headers['x-gateway-event'], r.json.event);
  t.equal(r.headers['content-type'], 'application/json');
  t.ok(Math.abs(Date.parse(r.json.time) - r.at) < 5000, 'time is when it happened');
}

t.test('key.quota: 80 % and 100 % of quota_usd and of a USD window, each once, signed, nothing secret', async (t) => {
  const r = await receiver(t);
  const { gateway } = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url, limits: 'quota_usd: 0.5, usd_5h: 0.6' })));
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push(await chat(gateway.url));
  t.same(statuses, [200, 200, 200, 200, 429, 429], 'four requests spend 0.56 of 0.50; then the quota refuses');
  await r.until(3);
  await sleep(1500); // a check per key per second: anything more would have come by now
  const quota = r.of('key.quota').map((x) => x.json.data);
  t.equal(quota.length, 3, 'both shares of the quota, 80 % of the window');
  const find = (limit: string, percent: number) => quota.filter((d) => d.limit === limit && d.percent === percent);
  for (const [limit, percent] of [['quota_usd', 80], ['quota_usd', 100], ['usd_5h', 80]] as const) t.equal(find(limit, percent).length, 1, `${limit} ${percent} % once`);
  t.equal(find('usd_5h', 100).length, 0, '0.56 of the window\'s 0.60 is not 100 %');
  const [q100] = find('quota_usd', 100);
  t.match(q100, { key_id: 'q', group: 'main', limit_usd: 0.5, window_start: null, reset_at: null });
  t.ok(Math.abs(q100.used_usd - 4 * COST) < 1e-9, `used ${q100.used_usd}`);
  t.equal(q100.used_percent, 112);
  t.ok(find('quota_usd', 80)[0].used_usd >= 0.4, 'sent once 80 % was reached');
  const [w80] = find('usd_5h', 80);
  t.match(w80, { limit_usd: 0.6, window_start: String, reset_at: String });
  t.equal(Date.parse(w80.reset_at) - Date.parse(w80.window_start), 5 * 3600_000, 'the window\'s own start and reset');
  for (const x of r.received) { signed(t, x); clean(t, x); }
  t.equal(new Set(r.received.map((x) => x.json.id)).size, 3, 'each event its own id');
});

t.test('once per process: a key past 80 % that keeps spending is not told again until it reaches 100 %', async (t) => {
  const r = await receiver(t);
  const { gateway } = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url, events: ['key.quota'], limits: 'quota_usd: 1' })));
  for (let i = 0; i < 6; i++) t.equal(await chat(gateway.url), 200);
  await r.until(1);
  t.match(r.received[0].json.data, { limit: 'quota_usd', percent: 80, used_usd: 0.84 });
  // Each settlement after this one is looked at again (a second apart): still 80 %, not sent again.
  for (let i = 0; i < 2; i++) {
    await sleep(1100);
    t.equal(await chat(gateway.url), 200);
  }
  await r.until(2);
  await sleep(1200);
  t.same(r.received.map((x) => [x.json.data.percent, x.json.data.used_usd]), [[80, 0.84], [100, 1.12]], '80 % once, then 100 % once');
});

t.test('account.attention and group.exhausted: once each, whatever the requests after', async (t) => {
  const r = await receiver(t);
  const { gateway, lines } = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url })));
  t.equal(await chat(gateway.url, 'sk-pool-0001'), 429, 'the revoked account is paused, the other is rate limited');
  for (let i = 0; i < 3; i++) await chat(gateway.url, 'sk-pool-0001');
  await r.until(2);
  await sleep(500);
  t.equal(r.received.length, 2);
  const [attention] = r.of('account.attention');
  t.match(attention.json.data, { group: 'pool', account: 'revoked', status: 401 });
  const pausedFor = Date.parse(attention.json.data.paused_until) - Date.parse(attention.json.time);
  t.ok(pausedFor > 590_000 && pausedFor <= 600_000, `paused for auth_pause_ms (${pausedFor} ms)`);
  const [exhausted] = r.of('group.exhausted');
  t.match(exhausted.json.data, { group: 'pool' });
  t.same(exhausted.json.data.accounts.map((a: any) => [a.id, a.reason]).sort(), [['limited', 'rate_limited'], ['revoked', 'auth']]);
  const returns = Date.parse(exhausted.json.data.returns_at) - Date.parse(exhausted.json.time);
  t.ok(returns > 25_000 && returns <= 31_000, `returns when the rate limit ends (${returns} ms)`);
  for (const x of r.received) { signed(t, x); clean(t, x); }
  t.notOk(lines.some((l) => JSON.stringify(l).includes(SECRET) || JSON.stringify(l).includes('receiver-own-token')), 'no log line holds the secret or the URL\'s token');
});

t.test('a receiver that fails first: retried with the same id and body, listed as sent after 2 attempts', async (t) => {
  const r = await receiver(t, (n) => (n === 0 ? 503 : 200));
  const { gateway } = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url, events: ['account.attention'], settings: ['retry_ms: 100'] })));
  await chat(gateway.url, 'sk-pool-0001');
  const [first, second] = await r.until(2);
  t.equal(first.body, second.body, 'the same body');
  t.equal(first.headers['x-gateway-signature'], second.headers['x-gateway-signature']);
  t.ok(second.at - first.at >= 90, `retried after retry_ms (${second.at - first.at} ms)`);
  const listed = await eventually(() => admin(gateway, 'GET', '/admin/notifications'), (x) => x.body.deliveries.length === 1);
  t.match(listed.body.deliveries[0], { id: first.json.id, event: 'account.attention', hook: 'rx', subject: 'pool/revoked', result: 'sent', attempts: 2, status: 200, error: null });
  t.same(listed.body.webhooks, [{ name: 'rx', host: new URL(r.url).host, events: ['account.attention'] }], 'the hook by name and host: not its path or token');
  t.notOk(JSON.stringify(listed.body).includes('receiver-own-token'));
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_webhook_deliveries_total{hook="rx",event="account.attention",result="sent"}'), 1);
});

t.test('a receiver that never answers: timeout_ms per attempt, retries bounded, then failed; requests never wait', async (t) => {
  const r = await receiver(t, () => 'hang');
  const { gateway, lines } = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url, limits: 'quota_usd: 100', settings: ['timeout_ms: 300', 'retries: 2', 'retry_ms: 100'] })));
  await chat(gateway.url, 'sk-pool-0001');
  // While the deliveries hang, the gateway serves on as fast as ever.
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    t.equal(await chat(gateway.url), 200);
    t.ok(performance.now() - start < 1000, 'a request does not wait for a webhook');
  }
  const listed = await eventually(() => admin(gateway, 'GET', '/admin/notifications'), (x) => x.body.deliveries.length === 2, 8000);
  for (const d of listed.body.deliveries) t.match(d, { hook: 'rx', result: 'failed', attempts: 3, status: null, error: 'timeout' });
  await sleep(700);
  t.equal(r.received.length, 6, 'two events, three attempts each, and no more');
  const m = await metricsText(gateway.url);
  t.equal(metricValue(m, 'gateway_webhook_deliveries_total{hook="rx",event="group.exhausted",result="failed"}'), 1);
  t.equal(metricValue(m, 'gateway_webhook_queue'), 0, 'nothing left queued');
  const failed = lines.filter((l) => l.msg === 'webhook delivery to "rx" failed');
  t.equal(failed.length, 2);
  t.match(failed[0], { level: 'warn', attempts: 3, error: 'timeout' });
});

t.test('a full queue: deliveries past queue_limit are dropped and counted, requests unaffected', async (t) => {
  const r = await receiver(t, () => 'hang');
  const { gateway, lines } = await withLoggedGateway(t, writeConfig(hookConfig({
    url: r.url, events: ['key.quota'], limits: 'quota_usd: 1', settings: ['queue_limit: 2', 'timeout_ms: 5000', 'quota_percents: [2, 5, 10, 50]'],
  })));
  t.equal(await chat(gateway.url), 200, '14 % of the quota: three shares reached at once');
  await eventually(async () => r.received.length, (n) => n === 2);
  const m = await eventually(() => metricsText(gateway.url), (text) => metricValue(text, 'gateway_webhook_deliveries_total{hook="rx",event="key.quota",result="dropped"}') === 1);
  t.equal(metricValue(m, 'gateway_webhook_deliveries_total{hook="rx",event="key.quota",result="dropped"}'), 1, 'the third is dropped');
  t.equal(metricValue(m, 'gateway_webhook_queue'), 2, 'two held, never more');
  t.ok(lines.some((l) => l.level === 'warn' && /webhook queue full/.test(l.msg)), 'and said');
  t.equal(await chat(gateway.url), 200);
});

t.test('GET /admin/notifications refuses what it does not know; a gateway without webhooks lists none', async (t) => {
  const r = await receiver(t);
  const { gateway } = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url })));
  t.match(await admin(gateway, 'GET', '/admin/notifications?limit=0'), { status: 400, body: { error: { message: 'limit must be an integer from 1 to 200' } } });
  t.match(await admin(gateway, 'GET', '/admin/notifications?limt=3'), { status: 400, body: { error: { message: /Unknown query parameter "limt"/ } } });
  t.equal((await admin(gateway, 'GET', '/admin/notifications', undefined, 'wrong-token-0123456789abcdef-0123456789')).status, 401);
  const none = await withLoggedGateway(t, writeConfig(hookConfig({ url: r.url }).replace(/notifications:\n {2}webhooks:\n.*\n/, '')));
  t.same((await admin(none.gateway, 'GET', '/admin/notifications')).body, { webhooks: [], deliveries: [] });
  t.equal(await chat(none.gateway.url, 'sk-pool-0001'), 429);
  await sleep(300);
  t.equal(r.received.length, 0, 'nothing is sent without a webhook');
});

t.test('a reload takes new webhooks at once', async (t) => {
  const before = await receiver(t);
  const after = await receiver(t);
  const file = writeConfig(hookConfig({ url: before.url, events: ['account.attention'] }));
  const { gateway } = await withLoggedGateway(t, file);
  writeFileSync(file, hookConfig({ url: after.url, events: ['group.exhausted'] }));
  t.same(await gateway.reload(), [], 'reloaded');
  t.equal(await chat(gateway.url, 'sk-pool-0001'), 429);
  const [got] = await after.until(1);
  t.equal(got.json.event, 'group.exhausted', 'the new hook, with its own events');
  await sleep(300);
  t.equal(before.received.length, 0, 'nothing to the hook the reload removed');
  t.same((await admin(gateway, 'GET', '/admin/notifications')).body.webhooks.map((h: any) => h.events), [['group.exhausted']]);
});

t.test('a shutdown does not wait for a receiver: what is queued is dropped and said once', async (t) => {
  const r = await receiver(t, () => 'hang');
  const lines: any[] = [];
  const gateway = await startGateway({
    configFile: writeConfig(hookConfig({ url: r.url, settings: ['timeout_ms: 60000'] })), host: '127.0.0.1', port: 0, env: testEnv(),
    log: createLogger('info', { write: (line: string) => { lines.push(JSON.parse(line)); } }),
  });
  t.equal(await chat(gateway.url, 'sk-pool-0001'), 429);
  await r.until(2);
  const start = performance.now();
  await gateway.close();
  t.ok(performance.now() - start < 3000, `closed in ${Math.round(performance.now() - start)} ms with two deliveries hanging`);
  t.match(lines.filter((l) => /webhook/.test(l.msg)), [{ level: 'warn', dropped: 2, msg: 'webhook deliveries still queued at shutdown are not sent' }]);
});
