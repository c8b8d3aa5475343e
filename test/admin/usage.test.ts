// /admin/usage and /admin/keys/{id}/usage after real traffic through the simulator: records, filters, paging, per-key totals.
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { admin, adminConfig, chat, eventually, issue } from './helpers.ts';

const gw = await withGateway(t, adminConfig());
const a = await issue(gw, { group: 'main', name: 'a' });
const b = await issue(gw, { group: 'other', name: 'b' });

// One request read in full, so its record can be compared with what the client was told.
const first = await post(gw.url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'The first metered request'), bearer('sk-alice-0001'));
const firstBody = await first.json() as { usage: { prompt_tokens: number; completion_tokens: number } };
const statuses = [first.status];
for (const [key, model] of [['sk-alice-0001', 'gpt-4o-mini'], [a.key, 'gpt-5'], [b.key, 'gpt-4o-mini'], [b.key, 'gpt-4o-mini']] as const) {
  statuses.push(await chat(gw, key, model));
}
const all = await eventually(() => admin(gw, 'GET', '/admin/usage'), (r) => r.body.records?.length >= 5);
const records: any[] = all.body.records;

t.test('every request has one record, newest first, with the right key, group, model and price', async (t) => {
  t.same(statuses, [200, 200, 200, 200, 200], 'the traffic went through');
  t.equal(all.status, 200);
  t.equal(records.length, 5);
  t.equal(all.body.cursor, null, 'one page holds them all');
  t.equal(new Set(records.map((r) => r.request_id)).size, 5, 'no record doubled');
  t.same(records.map((r) => r.time), [...records.map((r) => r.time)].sort((x, y) => y - x), 'newest first');
  const oldest = records[4];
  t.match(oldest, { key_id: 'alice', group: 'main', platform: 'sim', model: 'gpt-4o-mini', status: 200, ending: 'completed', stream: false });
  t.equal(oldest.input_tokens, firstBody.usage.prompt_tokens, 'input tokens as the client saw them');
  t.equal(oldest.output_tokens, firstBody.usage.completion_tokens, 'output tokens as the client saw them');
  t.ok(Math.abs(oldest.cost - (oldest.input_tokens * 1000 + oldest.output_tokens * 2000) / 1e6) < 1e-9, 'priced from the pricing table');
  const other = records.find((r) => r.key_id === b.record.id);
  t.ok(Math.abs(other.cost - 2 * (other.input_tokens * 1000 + other.output_tokens * 2000) / 1e6) < 1e-9, 'times the group rate_multiplier');
  t.notMatch(JSON.stringify(records), a.key.slice(3), 'no secret in records');
});

t.test('filters: key, group, model, and combined', async (t) => {
  const ids = async (query: string) => (await admin(gw, 'GET', `/admin/usage?${query}`)).body.records.map((r: any) => r.request_id);
  const expect = (pred: (r: any) => boolean) => records.filter(pred).map((r) => r.request_id);
  t.same(await ids('key=alice'), expect((r) => r.key_id === 'alice'));
  t.equal((await ids('key=alice')).length, 2);
  t.same(await ids('group=other'), expect((r) => r.group === 'other'));
  t.equal((await ids('group=other')).length, 2);
  t.same(await ids('model=gpt-5'), expect((r) => r.model === 'gpt-5'));
  t.equal((await ids('model=gpt-5')).length, 1);
  t.same(await ids(`key=${a.record.id}&model=gpt-4o-mini`), [], 'filters combine');
  t.same(await ids('key=nobody'), []);
});

t.test('time range: from/to as ISO or epoch ms, inclusive', async (t) => {
  const mid = records[2].time;
  const from = (await admin(gw, 'GET', `/admin/usage?from=${new Date(mid).toISOString()}`)).body.records;
  t.same(from.map((r: any) => r.request_id), records.filter((r) => r.time >= mid).map((r) => r.request_id));
  t.ok(from.length >= 3 && from.length < 5 + 1);
  const to = (await admin(gw, 'GET', `/admin/usage?to=${mid}`)).body.records;
  t.same(to.map((r: any) => r.request_id), records.filter((r) => r.time <= mid).map((r) => r.request_id));
  const none = (await admin(gw, 'GET', `/admin/usage?to=${records[4].time - 1}`)).body.records;
  t.same(none, [], 'nothing before the first request');
});

t.test('paging: limit and cursor walk every record once, in order', async (t) => {
  const seen: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const res: any = await admin(gw, 'GET', `/admin/usage?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.equal(res.status, 200);
    sizes.push(res.body.records.length);
    seen.push(...res.body.records.map((r: any) => r.request_id));
    cursor = res.body.cursor;
  } while (cursor && sizes.length < 10);
  t.same(sizes, [2, 2, 1]);
  t.same(seen, records.map((r) => r.request_id));
  const filtered = await admin(gw, 'GET', '/admin/usage?group=other&limit=1');
  t.equal(filtered.body.records.length, 1);
  t.type(filtered.body.cursor, 'string', 'a filtered page has a cursor to the next');
  const next = await admin(gw, 'GET', `/admin/usage?group=other&limit=1&cursor=${encodeURIComponent(filtered.body.cursor)}`);
  t.equal(next.body.records[0].group, 'other');
  t.not(next.body.records[0].request_id, filtered.body.records[0].request_id);
});

t.test('bad queries → 400 naming the problem', async (t) => {
  for (const [query, code] of [
    ['limit=501', 'invalid_limit'], ['limit=0', 'invalid_limit'], ['limit=ten', 'invalid_limit'], ['from=yesterday', 'invalid_time'],
    [`from=${Date.now()}&to=${Date.now() - 1000}`, 'invalid_time'], ['keys=alice', 'invalid_query'],
  ]) {
    const res = await admin(gw, 'GET', `/admin/usage?${query}`);
    t.equal(res.status, 400, query);
    t.equal(res.body.error.code, code, query);
  }
  t.equal((await admin(gw, 'GET', '/admin/usage?limit=500')).status, 200, '500 is the largest page');
});

t.test('per-key usage: the /v1/usage view of that key, with its record', async (t) => {
  for (const [id, key] of [[a.record.id, a.key], ['alice', 'sk-alice-0001'], [b.record.id, b.key]]) {
    const res = await admin(gw, 'GET', `/admin/keys/${id}/usage?days=7`);
    t.equal(res.status, 200);
    t.equal(res.body.key.id, id);
    const own = await (await fetch(gw.url + '/v1/usage?days=7', { headers: bearer(key) })).json();
    t.same(res.body.usage, own, `${id}: the same numbers the key's holder sees`);
  }
  const alice = (await admin(gw, 'GET', '/admin/keys/alice/usage')).body.usage;
  t.equal(alice.usage.total.requests, 2);
  t.same(alice.model_stats.map((m: any) => [m.model, m.requests]), [['gpt-4o-mini', 2]]);
  const sum = records.filter((r) => r.key_id === 'alice').reduce((s, r) => s + r.cost, 0);
  t.ok(Math.abs(alice.usage.total.cost - sum) < 1e-9, 'total cost is the sum of the records');
  t.equal((await admin(gw, 'GET', '/admin/keys/nope/usage')).status, 404);
  t.equal((await admin(gw, 'GET', '/admin/keys/alice/usage?days=91')).status, 400);
});

t.test('per-key usage takes the query of /v1/usage: days, start_date, end_date and timezone, with its errors', async (t) => {
  const zone = 'Pacific/Kiritimati'; // UTC+14: its date is a day ahead of UTC for ten hours of every day
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(Date.now());
  for (const query of [`timezone=${zone}`, `days=3&timezone=${encodeURIComponent(zone)}`, `days=2&start_date=2020-01-01&end_date=2020-01-02&timezone=${zone}`]) {
    const res = await admin(gw, 'GET', `/admin/keys/alice/usage?${query}`);
    t.equal(res.status, 200, query);
    const own = await (await fetch(gw.url + `/v1/usage?${query}`, { headers: bearer('sk-alice-0001') })).json() as any;
    t.same(res.body.usage, own, `${query}: the same view the key's holder sees`);
  }
  const zoned = (await admin(gw, 'GET', `/admin/keys/alice/usage?days=3&timezone=${zone}`)).body.usage;
  t.equal(zoned.daily_usage.at(-1).date, today, 'the last day with usage is today in the asked zone');
  t.equal(zoned.usage.today.requests, 2, 'today holds alice\'s two requests');
  // UTC+14 and UTC-11 are 25 hours apart: their dates differ at every instant, so the zone cannot have been ignored.
  const behind = (await admin(gw, 'GET', '/admin/keys/alice/usage?days=3&timezone=Pacific/Pago_Pago')).body.usage;
  t.not(behind.daily_usage.at(-1).date, zoned.daily_usage.at(-1).date, 'the day of the requests depends on the zone');
  const dated = (await admin(gw, 'GET', '/admin/keys/alice/usage?start_date=2020-01-01&end_date=2020-01-02')).body.usage;
  t.same(dated.model_stats, [], 'no model had requests in those days');

  for (const [query, code] of [['days=0', 'invalid_days'], ['days=91', 'invalid_days'], ['days=ten', 'invalid_days'], ['start_date=2025/01/01', 'invalid_date'],
    ['end_date=tomorrow', 'invalid_date'], ['timezone=Mars%2FOlympus_Mons', 'invalid_timezone']]) {
    const res = await admin(gw, 'GET', `/admin/keys/alice/usage?${query}`);
    const own = await (await fetch(gw.url + `/v1/usage?${query}`, { headers: bearer('sk-alice-0001') })).json() as any;
    t.equal(res.status, 400, query);
    t.equal(own.error.code, code, query);
    // The same error, each in its route's envelope (the admin one has no `param`).
    t.match(res.body.error, { code: own.error.code, message: own.error.message }, `${query}: the /v1/usage error`);
  }
});
