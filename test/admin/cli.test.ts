// The keys CLI (scripts/keys.ts) against a live test gateway: create, list, revoke, enable, usage, delete, and its failures.
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { ADMIN, admin, adminConfig, chat, eventually, keysCli } from './helpers.ts';

const gw = await withGateway(t, adminConfig());
const keys = keysCli(gw);

t.test('create prints the record and the plaintext once; the key works', async (t) => {
  const run = await keys(['create', '--group', 'main', '--name', 'cli-made', '--rpm', '30', '--quota-usd', '1.5', '--expires', '2031-01-01T00:00:00Z']);
  t.equal(run.code, 0, run.stderr);
  const key = /^key: (sk-[0-9a-f]{64})$/m.exec(run.stdout)?.[1];
  t.ok(key, 'the plaintext is printed');
  t.match(run.stdout, /ID\s+NAME\s+SOURCE\s+GROUP\s+STATUS/);
  t.match(run.stdout, /key_[0-9a-f]{12}\s+cli-made\s+store\s+main\s+active\s+rpm=30 quota_usd=\$1\.50\s+2031-01-01T00:00:00Z/);
  t.match(run.stdout, /only time the key is shown/);
  t.equal(await chat(gw, key!), 200);
});

t.test('list, revoke, enable, usage, delete', async (t) => {
  const made = await keys(['create', '--group', 'other', '--json']);
  const { key, record } = JSON.parse(made.stdout);
  t.match(key, /^sk-/);

  const list = await keys(['list']);
  t.equal(list.code, 0);
  t.match(list.stdout, /^alice\s+config\s+main\s+active/m, 'config keys listed');
  t.match(list.stdout, new RegExp(`^${record.id}\\s+store\\s+other\\s+active`, 'm'));
  t.notMatch(list.stdout, key.slice(3), 'list never shows a secret');

  t.equal(await chat(gw, key), 200);
  const revoke = await keys(['revoke', record.id]);
  t.equal(revoke.code, 0);
  t.equal(revoke.stdout.trim(), `key ${record.id} disabled`);
  t.equal(await chat(gw, key), 401, 'a revoked key is refused at once');
  t.equal((await keys(['enable', record.id])).code, 0);
  t.equal(await chat(gw, key), 200);

  await eventually(() => keys(['usage', record.id, '--json']), (r) => JSON.parse(r.stdout).usage.usage.total.requests >= 2);
  const usage = await keys(['usage', record.id]);
  t.equal(usage.code, 0);
  t.match(usage.stdout, new RegExp(`key ${record.id} \\(other\\): active, unrestricted`));
  t.match(usage.stdout, /^total\s+2\s+/m, 'two requests in total');
  const records = await keys(['usage', '--group', 'other', '--limit', '5']);
  t.equal(records.code, 0);
  t.match(records.stdout, /TIME\s+KEY\s+MODEL\s+GROUP\s+IN\s+OUT\s+COST\s+STATUS\s+ENDING/);
  t.equal(records.stdout.trim().split('\n').length, 3, 'a header and the two requests of group other');
  t.match(records.stdout, new RegExp(`${record.id}\\s+gpt-4o-mini\\s+other\\s+\\d+\\s+\\d+\\s+\\$[\\d.]+\\s+200\\s+completed`));

  const del = await keys(['delete', record.id]);
  t.equal(del.stdout.trim(), `key ${record.id} deleted`);
  t.equal(await chat(gw, key), 401);
});

t.test('usage ID passes --days, --start-date, --end-date and --timezone to the key usage API', async (t) => {
  const query = 'days=2&start_date=2020-01-01&end_date=2020-01-02&timezone=Pacific%2FKiritimati';
  const run = await keys(['usage', 'alice', '--days', '2', '--start-date', '2020-01-01', '--end-date', '2020-01-02', '--timezone', 'Pacific/Kiritimati', '--json']);
  t.equal(run.code, 0, run.stderr);
  t.same(JSON.parse(run.stdout), (await admin(gw, 'GET', `/admin/keys/alice/usage?${query}`)).body);
  const zone = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Pago_Pago' }).format(Date.now());
  t.equal(await chat(gw, 'sk-alice-0001'), 200);
  // Settlement lands just after the response.
  const zoned = await eventually(() => keys(['usage', 'alice', '--timezone', 'Pacific/Pago_Pago', '--json']).then((r) => JSON.parse(r.stdout)),
    (u) => u.usage.daily_usage.length > 0);
  t.equal(zoned.usage.daily_usage.at(-1).date, zone, 'days in the asked zone');

  const bad = await keys(['usage', 'alice', '--timezone', 'Mars/Olympus_Mons']);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /^error: Invalid timezone "Mars\/Olympus_Mons": use an IANA time zone name .* \(HTTP 400\)$/m);
  const days = await keys(['usage', 'alice', '--days', '91']);
  t.match(days.stderr, /^error: Invalid days, allowed range is 1-90 \(HTTP 400\)$/m);
  const noId = await keys(['usage', '--timezone', 'UTC']);
  t.equal(noId.code, 1);
  t.match(noId.stderr, /need a key id/);
});

t.test('failures exit 1 with the server\'s message', async (t) => {
  const unknown = await keys(['create', '--group', 'nope']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^error: Unknown group "nope" \(known: main, other, pool-a\) \(HTTP 400\)$/m);
  const immutable = await keys(['delete', 'alice']);
  t.equal(immutable.code, 1);
  t.match(immutable.stderr, /edit gateway.yaml.*\(HTTP 409\)/);
  const missing = await keys(['revoke', 'no-such-key']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /No key with id "no-such-key" \(HTTP 404\)/);
  const wrong = await keys(['list'], { GATEWAY_ADMIN_TOKEN: 'not-the-token', GATEWAY_URL: gw.url });
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /Invalid admin token \(HTTP 401\)/);
  const viaFlag = await keys(['list', '--url', gw.url], { GATEWAY_ADMIN_TOKEN: ADMIN });
  t.equal(viaFlag.code, 0, '--url instead of GATEWAY_URL');
});

t.test('local mistakes exit 1 before calling the gateway', async (t) => {
  const noToken = await keys(['list'], { GATEWAY_URL: gw.url });
  t.equal(noToken.code, 1);
  t.match(noToken.stderr, /set GATEWAY_ADMIN_TOKEN/);
  const noGroup = await keys(['create']);
  t.equal(noGroup.code, 1);
  t.match(noGroup.stderr, /create needs --group/);
  const badNumber = await keys(['create', '--group', 'main', '--rpm', 'lots']);
  t.equal(badNumber.code, 1);
  t.match(badNumber.stderr, /--rpm must be a non-negative number/);
  const noId = await keys(['revoke']);
  t.equal(noId.code, 1);
  t.match(noId.stderr, /revoke needs a key id/);
  const unknown = await keys(['frobnicate']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /unknown command "frobnicate"/);
  const down = await keys(['list', '--url', 'http://127.0.0.1:1']);
  t.equal(down.code, 1);
  t.match(down.stderr, /cannot reach http:\/\/127\.0\.0\.1:1/);
  const help = await keys(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /usage: npm run keys -- <command>/);
  t.equal((await keys(['list'])).stdout.includes('key_'), true, 'keys made by the earlier tests are listed');
});
