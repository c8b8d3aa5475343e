// Key issuance and management through /admin/keys: plaintext once, only a hash stored, immediate effect, config keys read-only.
import { createHash } from 'node:crypto';
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { admin, adminConfig, chat, issue } from './helpers.ts';

const gw = await withGateway(t, adminConfig());
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

t.test('issue: 201 with the plaintext once, a record without secret or hash, and the key works at once', async (t) => {
  const res = await admin(gw, 'POST', '/admin/keys', { group: 'main', name: 'ci bot', limits: { rpm: 60, quota_usd: 2.5 }, expires_at: '2031-02-03T04:05:06Z' });
  t.equal(res.status, 201);
  t.equal(res.headers.get('cache-control'), 'no-store');
  const { key, record } = res.body;
  t.match(key, /^sk-[0-9a-f]{64}$/, 'sk- and 32 random bytes in hex');
  t.match(record, {
    id: /^key_[0-9a-f]{12}$/, name: 'ci bot', source: 'store', group: 'main', pools: [], models: null,
    limits: { rpm: 60, quota_usd: 2.5 }, expires_at: '2031-02-03T04:05:06.000Z', disabled: false, status: 'active',
  });
  t.ok(Math.abs(Date.parse(record.created_at) - Date.now()) < 60_000, 'created now');
  t.notOk('sha256' in record, 'no hash in the record');
  t.equal(await chat(gw, key), 200, 'the new key works on a model route immediately');

  const listed = JSON.stringify((await admin(gw, 'GET', '/admin/keys')).body);
  const shown = JSON.stringify((await admin(gw, 'GET', `/admin/keys/${record.id}`)).body);
  for (const text of [listed, shown]) {
    t.notMatch(text, key.slice(3), 'the plaintext is never shown again');
    t.notMatch(text, sha(key), 'nor its hash');
  }
  const second = await issue(gw, { group: 'main' });
  t.not(second.key, key, 'each key is new');
  t.not(second.record.id, record.id);
});

t.test('list: config keys (source config, no secret or hash) then issued keys', async (t) => {
  const issued = await issue(gw, { group: 'other', name: 'listed' });
  const { status, body } = await admin(gw, 'GET', '/admin/keys');
  t.equal(status, 200);
  const ids = body.keys.map((k: { id: string }) => k.id);
  t.same(ids.slice(0, 3), ['alice', 'capped', 'old'], 'config keys first, in file order');
  t.ok(ids.includes(issued.record.id));
  t.match(body.keys[0], { id: 'alice', source: 'config', group: 'main', pools: ['pool-a'], status: 'active', created_at: null });
  t.match(body.keys[2], { id: 'old', source: 'config', status: 'expired', expires_at: '2020-01-01T00:00:00.000Z' });
  const text = JSON.stringify(body);
  for (const secret of ['sk-alice-0001', 'sk-capped-0002', 'sk-old-0004']) {
    t.notMatch(text, secret);
    t.notMatch(text, sha(secret));
  }
  t.notMatch(text, /sha256|"key":/, 'no hash or secret field at all');
});

t.test('get: one key by id; unknown id → 404', async (t) => {
  t.match((await admin(gw, 'GET', '/admin/keys/capped')).body, { id: 'capped', source: 'config', limits: { quota_usd: 5, usd_5h: 1 } });
  const missing = await admin(gw, 'GET', '/admin/keys/nope');
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'key_not_found');
});

t.test('patch: disable refuses the key at once, enable restores it; limits, expiry, models and name change', async (t) => {
  const { key, record } = await issue(gw, { group: 'main' });
  t.equal(await chat(gw, key), 200, 'cached as valid by auth');
  const off = await admin(gw, 'PATCH', `/admin/keys/${record.id}`, { disabled: true });
  t.equal(off.status, 200);
  t.match(off.body, { id: record.id, disabled: true, status: 'disabled' });
  t.equal(await chat(gw, key), 401, 'disabled takes effect at once (the auth cache was cleared)');
  t.equal((await admin(gw, 'PATCH', `/admin/keys/${record.id}`, { disabled: false })).body.status, 'active');
  t.equal(await chat(gw, key), 200);

  const changed = await admin(gw, 'PATCH', `/admin/keys/${record.id}`, {
    name: 'renamed', limits: { rpm: 5 }, expires_at: Date.UTC(2032, 0, 1), models: ['gpt-5*'],
  });
  t.match(changed.body, { name: 'renamed', limits: { rpm: 5 }, expires_at: '2032-01-01T00:00:00.000Z', models: ['gpt-5*'] });
  t.equal(await chat(gw, key, 'gpt-4o-mini'), 404, 'the narrower model list applies at once (model not found for this key)');
  t.equal(await chat(gw, key, 'gpt-5'), 200);
  const cleared = await admin(gw, 'PATCH', `/admin/keys/${record.id}`, { expires_at: null, models: null, name: null });
  t.match(cleared.body, { name: null, expires_at: null, models: null });
  t.equal(await chat(gw, key, 'gpt-4o-mini'), 200);

  const expired = await admin(gw, 'PATCH', `/admin/keys/${record.id}`, { expires_at: '2020-01-01T00:00:00Z' });
  t.equal(expired.body.status, 'expired');
  t.equal(await chat(gw, key), 403, 'an expiry in the past refuses the key');
});

t.test('patch validation: empty, unknown fields, bad values → 400 naming the problem', async (t) => {
  const { record } = await issue(gw, { group: 'main' });
  const path = `/admin/keys/${record.id}`;
  for (const [body, pattern] of [
    [{}, /must NOT have fewer than 1 properties/], [{ status: 'off' }, /unknown field "status"/], [{ disabled: 'yes' }, /disabled: must be boolean/],
    [{ limits: { rpm: -1 } }, /limits.rpm: must be >= 0/], [{ limits: { rps: 1 } }, /unknown field "rps"/], [{ expires_at: 'soon' }, /expires_at must be an ISO 8601/],
    ['not json', /not valid JSON/],
  ] as const) {
    const res = await admin(gw, 'PATCH', path, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body.error.message, pattern);
  }
  t.equal((await admin(gw, 'PATCH', '/admin/keys/nope', { disabled: true })).status, 404);
});

t.test('delete: the key is gone and refused at once', async (t) => {
  const { key, record } = await issue(gw, { group: 'main' });
  t.equal(await chat(gw, key), 200);
  const res = await admin(gw, 'DELETE', `/admin/keys/${record.id}`);
  t.same(res.body, { id: record.id, deleted: true });
  t.equal(await chat(gw, key), 401);
  t.equal((await admin(gw, 'GET', `/admin/keys/${record.id}`)).status, 404);
  t.equal((await admin(gw, 'DELETE', `/admin/keys/${record.id}`)).status, 404, 'a second delete finds nothing');
});

t.test('config keys cannot be changed through the API: 409 saying to edit gateway.yaml', async (t) => {
  for (const [method, body] of [['PATCH', { disabled: true }], ['DELETE', undefined]] as const) {
    const res = await admin(gw, method, '/admin/keys/alice', body);
    t.equal(res.status, 409, method);
    t.equal(res.body.error.code, 'config_key_immutable');
    t.match(res.body.error.message, /edit gateway.yaml/);
  }
  t.equal(await chat(gw, 'sk-alice-0001'), 200, 'alice still works');
});

t.test('issue validation: group must exist, dedicated groups only as pools, pools dedicated, known fields', async (t) => {
  const cases: [unknown, number, RegExp][] = [
    [{}, 400, /must have required property 'group'/],
    [{ group: 'nope' }, 400, /Unknown group "nope" \(known: main, other, pool-a\)/],
    [{ group: 'pool-a' }, 400, /dedicated.*list it in pools/],
    [{ group: 'main', pools: ['other'] }, 400, /"other" is not a dedicated group/],
    [{ group: 'main', limits: { quota_usd: 'lots' } }, 400, /limits.quota_usd: must be number/],
    [{ group: 'main', expires_at: 'tomorrow' }, 400, /expires_at must be an ISO 8601 time/],
    [{ group: 'main', secret: 'mine' }, 400, /unknown field "secret"/],
  ];
  for (const [body, status, message] of cases) {
    const res = await admin(gw, 'POST', '/admin/keys', body);
    t.equal(res.status, status, JSON.stringify(body));
    t.match(res.body.error?.message, message);
  }
  const pooled = await issue(gw, { group: 'pool-a', pools: ['pool-a'] });
  t.same(pooled.record.pools, ['pool-a'], 'a dedicated group listed in pools is accepted');
  const withPool = await issue(gw, { group: 'main', pools: ['pool-a'], models: ['gpt-4o-mini'] });
  t.match(withPool.record, { group: 'main', pools: ['pool-a'], models: ['gpt-4o-mini'] });
});
