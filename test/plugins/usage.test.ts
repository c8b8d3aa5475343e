// Stage `usage` (GET /v1/usage): the exact JSON shape existing tools read (sub2api-behaviour.md §6.3) for a quota-limited
// key, an unlimited key, an expired key and an exhausted key — every field present when it should be, absent otherwise.
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { bearer } from '../helpers/http.ts';
import { admin, adminConfig, chat, eventually, issue } from '../admin/helpers.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { usageView } from '../../plugins/usage.ts';
import { record } from '../store/fixtures.ts';

const gw = await withGateway(t, `${adminConfig()}routes:
  extends: default
  add:
    - { method: GET, path: /antigravity/v1/usage, format: anthropic-messages, pipeline: key-usage }
`);
const usageOf = async (key: string, query = '', path = '/v1/usage') => {
  const res = await fetch(gw.url + path + query, { headers: bearer(key) });
  return { status: res.status, headers: res.headers, body: await res.json() as any };
};

// One chat of "Hello there, world!" on gpt-4o-mini: 11 input + 7 output tokens at 1000 / 2000 USD per 1M = 0.025 USD.
const COST = 0.025;
const TOTALS_FIELDS = ['actual_cost', 'cache_creation_tokens', 'cache_read_tokens', 'cost', 'input_tokens', 'output_tokens', 'requests', 'total_tokens'];
const DAY_FIELDS = ['actual_cost', 'cache_read_tokens', 'cache_write_tokens', 'cost', 'date', 'input_tokens', 'output_tokens', 'requests'];
const MODEL_FIELDS = [...TOTALS_FIELDS, 'model'].sort();
const ONE_CHAT = { requests: 1, input_tokens: 11, output_tokens: 7, cache_creation_tokens: 0, cache_read_tokens: 0, total_tokens: 18, cost: COST, actual_cost: COST };
const NOTHING = { requests: 0, input_tokens: 0, output_tokens: 0, cache_creation_tokens: 0, cache_read_tokens: 0, total_tokens: 0, cost: 0, actual_cost: 0 };
const keys = (o: object) => Object.keys(o).sort();
const today = () => new Date().toISOString().slice(0, 10);

const expiresAt = Date.now() + 10 * 86_400_000 - 60_000;
const limited = await issue(gw, { group: 'main', limits: { quota_usd: 5, usd_5h: 1, usd_1d: 2, usd_7d: 3 }, expires_at: expiresAt });
const exhausted = await issue(gw, { group: 'main', limits: { quota_usd: 0.01 } });
const before = Date.now();
const statuses = [await chat(gw, limited.key), await chat(gw, exhausted.key), await chat(gw, 'sk-alice-0001')];
await eventually(() => usageOf(exhausted.key), (u) => u.body.status === 'quota_exhausted');
await eventually(() => usageOf(limited.key), (u) => u.body.usage.total.requests === 1);
await eventually(() => usageOf('sk-alice-0001'), (u) => u.body.usage.total.requests === 1);
// Settled by now: the windows started at a record's time, between these two instants.
const after = Date.now();

t.test('the traffic behind the numbers', async (t) => {
  t.same(statuses, [200, 200, 200]);
  t.equal(await chat(gw, exhausted.key), 429, 'the exhausted key is refused for model calls');
  t.equal(await chat(gw, 'sk-old-0004'), 403, 'and so is the expired one');
});

t.test('quota-limited key: quota, remaining, each window with its start and reset, expiry', async (t) => {
  const { status, headers, body } = await usageOf(limited.key);
  t.equal(status, 200);
  t.equal(headers.get('cache-control'), 'no-store');
  t.same(keys(body), ['daily_usage', 'days_until_expiry', 'expires_at', 'isValid', 'mode', 'model_stats', 'quota', 'rate_limits', 'remaining', 'status', 'unit', 'usage']);
  t.match(body, { mode: 'quota_limited', isValid: true, status: 'active', unit: 'USD' });
  t.strictSame(body.quota, { limit: 5, used: COST, remaining: 5 - COST, unit: 'USD' });
  t.equal(body.remaining, 1 - COST, 'the least left over the quota and every window (5h here)');
  t.equal(body.expires_at, new Date(expiresAt).toISOString());
  t.equal(body.days_until_expiry, 10);
  t.same(body.rate_limits.map((w: any) => w.window), ['5h', '1d', '7d']);
  for (const [w, limit, ms] of [['5h', 1, 5 * 3_600_000], ['1d', 2, 86_400_000], ['7d', 3, 7 * 86_400_000]] as const) {
    const win = body.rate_limits.find((x: any) => x.window === w);
    t.same(keys(win), ['limit', 'remaining', 'reset_at', 'used', 'window', 'window_start'], `${w}: every field of an active window`);
    t.match(win, { window: w, limit, used: COST, remaining: limit - COST }, w);
    const start = Date.parse(win.window_start);
    t.ok(start >= before && start <= after, `${w}: the window started with the first spend`);
    t.equal(Date.parse(win.reset_at), start + ms, `${w}: resets one window length later`);
  }
  t.same(keys(body.usage), ['average_duration_ms', 'rpm', 'today', 'total', 'tpm']);
  t.strictSame(body.usage.total, ONE_CHAT);
  t.strictSame(body.usage.today, ONE_CHAT);
  t.equal(body.daily_usage.length, 1);
  t.same(keys(body.daily_usage[0]), DAY_FIELDS);
  t.strictSame(body.daily_usage[0], { date: today(), requests: 1, input_tokens: 11, output_tokens: 7, cache_read_tokens: 0, cache_write_tokens: 0, cost: COST, actual_cost: COST });
  t.equal(body.model_stats.length, 1);
  t.same(keys(body.model_stats[0]), MODEL_FIELDS, 'no account_cost: the operator\'s upstream cost is never shown');
  t.strictSame(body.model_stats[0], { model: 'gpt-4o-mini', ...ONE_CHAT });
});

t.test('quota-limited key with no spend yet: windows not started have no start and no reset', async (t) => {
  const { body } = await usageOf('sk-capped-0002');
  t.match(body, { mode: 'quota_limited', isValid: true, status: 'active', remaining: 1 });
  t.strictSame(body.quota, { limit: 5, used: 0, remaining: 5, unit: 'USD' });
  for (const win of body.rate_limits) {
    t.same(keys(win), ['limit', 'remaining', 'used', 'window', 'window_start'], `${win.window}: no reset_at`);
    t.equal(win.window_start, null);
    t.equal(win.used, 0);
  }
  t.notOk('expires_at' in body || 'days_until_expiry' in body, 'no expiry fields for a key without one');
  t.strictSame(body.usage, { today: NOTHING, total: NOTHING, average_duration_ms: 0, rpm: 0, tpm: 0 });
  t.same([body.daily_usage, body.model_stats], [[], []]);
});

t.test('unlimited key: unrestricted, the group as plan, remaining -1, no quota, windows or expiry', async (t) => {
  const { body } = await usageOf('sk-alice-0001');
  t.same(keys(body), ['daily_usage', 'isValid', 'mode', 'model_stats', 'planName', 'remaining', 'status', 'unit', 'usage']);
  t.match(body, { mode: 'unrestricted', isValid: true, status: 'active', planName: 'main', remaining: -1, unit: 'USD' });
  t.strictSame(body.usage.total, ONE_CHAT);
  t.strictSame(body.model_stats, [{ model: 'gpt-4o-mini', ...ONE_CHAT }]);
});

t.test('exhausted key: still answered, quota_exhausted, nothing remaining', async (t) => {
  const { status, body } = await usageOf(exhausted.key);
  t.equal(status, 200, 'its holder can see why it is refused');
  t.same(keys(body), ['daily_usage', 'isValid', 'mode', 'model_stats', 'quota', 'remaining', 'status', 'unit', 'usage']);
  t.match(body, { mode: 'quota_limited', isValid: false, status: 'quota_exhausted', remaining: 0, unit: 'USD' });
  t.strictSame(body.quota, { limit: 0.01, used: COST, remaining: 0, unit: 'USD' }, 'used past the limit (the last request overdrew it), none left');
  t.strictSame(body.usage.total, ONE_CHAT, 'the refused request left no usage');
});

t.test('expired key: still answered, expired, with its past expiry', async (t) => {
  const { status, body } = await usageOf('sk-old-0004');
  t.equal(status, 200);
  t.same(keys(body), ['daily_usage', 'days_until_expiry', 'expires_at', 'isValid', 'mode', 'model_stats', 'planName', 'remaining', 'status', 'unit', 'usage']);
  t.match(body, { mode: 'unrestricted', isValid: false, status: 'expired', expires_at: '2020-01-01T00:00:00.000Z', days_until_expiry: 0, remaining: -1 });
  t.strictSame(body.usage, { today: NOTHING, total: NOTHING, average_duration_ms: 0, rpm: 0, tpm: 0 });
});

t.test('average duration, rpm and tpm: the key\'s own requests (mean over all, count and tokens of the last 60 s)', async (t) => {
  const { body } = await usageOf(limited.key);
  const records = (await admin(gw, 'GET', `/admin/usage?key=${limited.record.id}`)).body.records;
  t.equal(records.length, 1);
  t.equal(body.usage.average_duration_ms, records[0].duration_ms, 'the mean of one request is its duration');
  if (Date.now() - before < 55_000) {
    t.equal(body.usage.rpm, 1, 'the one chat is within the last minute');
    t.equal(body.usage.tpm, 18, 'with its 11 + 7 tokens');
  }
});

t.test('timezone: daily_usage and today follow the asked zone; an unknown zone is a 400 in the route\'s envelope', async (t) => {
  // A zone whose date differs from the UTC date right now: UTC+14 from 10:00 UTC on, UTC-12 before 12:00 UTC.
  const zone = new Date().getUTCHours() >= 10 ? 'Pacific/Kiritimati' : 'Etc/GMT+12';
  const localDate = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(ms);
  const { status, body } = await usageOf(limited.key, `?timezone=${encodeURIComponent(zone)}`);
  t.equal(status, 200);
  if (localDate(before) === localDate(Date.now())) {
    t.not(localDate(before), today(), 'the zone is on another date than UTC');
    t.strictSame(body.daily_usage.map((d: any) => d.date), [localDate(before)], 'the chat is on the local date');
    t.strictSame(body.usage.today, ONE_CHAT, 'and that is today');
  }
  const bad = await usageOf(limited.key, '?timezone=Mars%2FOlympus_Mons');
  t.equal(bad.status, 400);
  t.strictSame(bad.body, { error: {
    message: 'Invalid timezone "Mars/Olympus_Mons": use an IANA time zone name such as Asia/Shanghai or America/New_York',
    type: 'invalid_request_error', param: 'timezone', code: 'invalid_timezone',
  } });
  const anthropic = await usageOf(limited.key, '?timezone=Not/AZone', '/antigravity/v1/usage');
  t.equal(anthropic.status, 400);
  t.match(anthropic.body, { type: 'error', error: { type: 'invalid_request_error', message: /^Invalid timezone "Not\/AZone"/ } });
  t.equal((await usageOf(limited.key, '?timezone=')).status, 200, 'an empty timezone is the default (UTC)');
});

t.test('the view in Asia/Shanghai just after local midnight: today is the new local day (store clock injected)', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const key = { id: 'k1', group: 'main', pools: [], limits: {}, disabled: false };
  // 23:50 and 00:10 local time (15:50 and 16:10 UTC, one UTC day), 20 minutes apart.
  const late = record({ time: Date.parse('2025-01-15T15:50:00Z'), model: 'gpt-4o-mini', input_tokens: 11, output_tokens: 7, cost: 0.025, duration_ms: 300 });
  const early = record({ time: Date.parse('2025-01-15T16:10:00Z'), model: 'gpt-4o-mini', input_tokens: 1, output_tokens: 2, cost: 0.5, duration_ms: 100 });
  await store.settle(late, undefined, {});
  await store.settle(early, undefined, {});
  const now = Date.parse('2025-01-15T16:10:30Z');
  const view = (timezone?: string) => store.keyUsage('k1', { days: 7, now, timezone }).then((u) => usageView(key as any, 'main', u, now));
  const sh = await view('Asia/Shanghai');
  t.strictSame(sh.usage, {
    today: { requests: 1, input_tokens: 1, output_tokens: 2, cache_creation_tokens: 0, cache_read_tokens: 0, total_tokens: 3, cost: 0.5, actual_cost: 0.5 },
    total: { requests: 2, input_tokens: 12, output_tokens: 9, cache_creation_tokens: 0, cache_read_tokens: 0, total_tokens: 21, cost: 0.525, actual_cost: 0.525 },
    average_duration_ms: 200, rpm: 1, tpm: 3,
  });
  t.strictSame(sh.daily_usage.map((d: any) => [d.date, d.requests, d.cost]), [['2025-01-15', 1, 0.025], ['2025-01-16', 1, 0.5]]);
  const utc = await view();
  t.equal(utc.usage.today.requests, 2, 'in UTC both are today');
  t.strictSame(utc.daily_usage.map((d: any) => [d.date, d.requests]), [['2025-01-15', 2]]);
});
