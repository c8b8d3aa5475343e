// Hardening II, the operator's side: bad admin input is a 400 that never takes the store offline (file and Redis), the
// file store's folder and files are its user's alone, admin.token must be long and a secret of its own, and a full disk
// is logged as what it is and counted. Each case reproduces a defect of the issue.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { startGateway } from '../../app/gateway.ts';
import { sqlite } from '../../core/store/file/sqlite.ts';
import { admin, adminConfig, chat, eventually, issue } from '../admin/helpers.ts';
import { chatConfig, testEnv, withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { gatewayProcess } from '../helpers/process.ts';
import { metricsText, metricValue } from '../helpers/http.ts';
import { redisForTest } from '../store/redis-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tempDir = (t: Test) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-h7-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Defect 9 on one store: every bad query is a 400 in the admin API's envelope, and the store stays available. */
async function badAdminInput(t: Test, store: string) {
  const { gateway, lines } = await withLoggedGateway(t, writeConfig(adminConfig({ store })));
  for (let i = 0; i < 3; i++) t.equal(await chat(gateway, 'sk-alice-0001'), 200);
  await eventually(() => admin(gateway, 'GET', '/admin/usage'), (r) => r.body.records?.length === 3);

  for (const cursor of ['garbage', '1:', ':1', '1:2:3', '1.5:2', '99999999999999999999:1', '1:99999999999999999999', '1e3:1']) {
    const res = await admin(gateway, 'GET', `/admin/usage?cursor=${encodeURIComponent(cursor)}`);
    t.equal(res.status, 400, `cursor ${cursor}: 400`);
    t.same(res.body.error, { code: 'invalid_cursor', message: 'cursor must be the cursor a previous page answered (as given)', type: 'invalid_request_error' });
  }
  const available = async (what: string) => t.equal(metricValue(await metricsText(gateway.url), 'gateway_store_available'), 1, `the store is still available after ${what}`);
  await available('bad cursors');
  for (const window of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    for (const path of ['/admin/usage/summary', '/admin/accounts']) {
      const res = await admin(gateway, 'GET', `${path}?window=${window}`);
      t.equal(res.status, 400, `${path}?window=${window}: 400`);
      t.equal(res.body.error?.code, 'invalid_window');
    }
  }
  await available('bad windows');
  for (const group of ['constructor', '__proto__', 'toString']) {
    const res = await admin(gateway, 'POST', '/admin/keys', { group });
    t.equal(res.status, 400, `a key of group ${group}: 400`);
    t.equal(res.body.error?.code, 'unknown_group');
  }

  await available('bad groups');
  t.notOk(lines.some((l) => /store unavailable/.test(l.msg)), 'no store outage logged');
  const first = await admin(gateway, 'GET', '/admin/usage?limit=2');
  t.equal(first.status, 200);
  const next = await admin(gateway, 'GET', `/admin/usage?limit=2&cursor=${encodeURIComponent(first.body.cursor)}`);
  t.equal(next.status, 200, 'a cursor the API gave still pages');
  t.equal(next.body.records.length, 1);
  t.equal(await chat(gateway, 'sk-alice-0001'), 200, 'and requests are served');
}

t.test('defect 9: bad admin queries are 400s and leave the file store available', async (t) => {
  await badAdminInput(t, `store: { path: "${join(tempDir(t), 'gateway.db')}" }`);
});

t.test('defect 9: bad admin queries are 400s and leave Redis available', async (t) => {
  const redis = await redisForTest(t, 'hardening-admin');
  await badAdminInput(t, `store: { redis: "${redis.url}", prefix: "${redis.prefix}" }`);
});

t.test('defect 10: the file store makes its folder 0700 and its files 0600, and tightens an older gateway\'s', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'data', 'store', 'gateway.db');
  const files = [path, `${path}.lock`, `${path}-wal`, `${path}-shm`];
  const config = writeConfig(adminConfig({ store: `store: { path: "${path}" }` }));
  const first = await startGateway({ configFile: config, host: '127.0.0.1', port: 0, env: testEnv(), log: pino({ level: 'silent' }) });
  t.equal(await chat(first, 'sk-alice-0001'), 200);
  t.equal(mode(join(dir, 'data')), '700', 'a folder it makes is 0700');
  t.equal(mode(join(dir, 'data', 'store')), '700');
  for (const f of files) t.equal(mode(f), '600', `${f.slice(dir.length)} is 0600`);
  await first.close();

  for (const f of [path, `${path}.lock`]) chmodSync(f, 0o644);
  await withLoggedGateway(t, config);
  for (const f of [path, `${path}.lock`]) t.equal(mode(f), '600', `${f.slice(dir.length)} tightened to 0600`);
});

t.test('defect 11: admin.token is refused when short, spaced or a key\'s secret; empty leaves the admin API off', async (t) => {
  const start = (yaml: string) => startGateway({ configFile: writeConfig(yaml), host: '127.0.0.1', port: 0, env: testEnv(), log: pino({ level: 'silent' }) });
  const refused = async (token: string, expected: RegExp, extra = '') => {
    const err = await start(adminConfig({ token }).replace('keys:\n', `keys:\n${extra}`)).then(() => undefined, (e: { problems?: string[] }) => e);
    t.match(err?.problems?.join('\n'), expected, `refused: ${expected}`);
  };
  await refused('a', /admin\.token: must be at least 32 characters \(it has 1\): generate one with `openssl rand -hex 32`/);
  await refused('x'.repeat(31), /must be at least 32 characters \(it has 31\)/);
  await refused('sk-alice-0001', /must be at least 32 characters/);
  await refused('sk-alice-0001'.repeat(3), /admin\.token: is the secret of key "long"/, `  - { id: long, key: ${'sk-alice-0001'.repeat(3)}, group: main }\n`);
  const hashed = 'h'.repeat(40);
  const sha = createHash('sha256').update(hashed).digest('hex');
  await refused(hashed, /is the secret of key "hashed"/, `  - { id: hashed, key_sha256: ${sha}, group: main }\n`);
  await refused(`${'y'.repeat(20)} ${'z'.repeat(20)}`, /must not contain spaces/);

  const off = await start(adminConfig({ token: '' }));
  t.teardown(() => off.close());
  t.equal((await admin(off, 'GET', '/admin/keys')).status, 503, 'no token: the admin API is off, the gateway runs');

  // An issued key's secret: the store knows it.
  const path = join(tempDir(t), 'gateway.db');
  const store = `store: { path: "${path}" }`;
  const first = await start(adminConfig({ store }));
  const { key } = await issue(first, { group: 'main', name: 'k' });
  await first.close();
  const err = await start(adminConfig({ store, token: key })).then(() => undefined, (e: { problems?: string[] }) => e);
  t.match(err?.problems?.join('\n'), /admin\.token: is the secret of issued key "key_[0-9a-f]+"/, 'an issued key\'s secret is refused');

  // What an operator sees: `--check` says what is required and fails.
  const check = spawnSync(process.execPath, ['app/main.ts', '--check', '--config', writeConfig(adminConfig({ token: 'short-token' }))], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  t.equal(check.status, 1, '--check fails');
  t.match(check.stderr, /gateway\.yaml:\d+:\d+ admin\.token: must be at least 32 characters \(it has 11\)/);
  t.notMatch(check.stderr, /short-token/, 'the token itself is not printed');
});

/** `unshare` can give a child a mount namespace with a tmpfs of its own (user namespaces allowed, or root). */
const canMount = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], { encoding: 'utf8' }).status === 0;

t.test('defect 15: a full disk is logged as full and counted; the writes resume once space is free', { skip: canMount ? false : 'unshare cannot mount a tmpfs here' }, async (t) => {
  const dir = tempDir(t);
  const mnt = join(dir, 'disk');
  mkdirSync(mnt);
  const config = writeConfig(chatConfig({ keyId: 'k', key: 'sk-disk-0001', store: `path: "${join(mnt, 'gateway.db')}"` }));
  // The gateway in a mount namespace of its own, its store on a 4 MB tmpfs; the test reaches the tmpfs through /proc.
  const { url, child, stdout } = await gatewayProcess(t, config, {
    prefix: ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', `mount -t tmpfs -o size=4m tmpfs '${mnt}' && exec "$@"`, 'sh'],
  });
  const disk = `/proc/${child.pid}/root${mnt}`;
  const send = async (n: number) => {
    const statuses = [];
    for (let i = 0; i < n; i++) statuses.push(await chat(url, 'sk-disk-0001'));
    t.same(statuses, Array(n).fill(200), `${n} requests served`);
  };
  await send(2);

  const filler = join(disk, 'filler');
  const fd = openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try { for (;;) writeSync(fd, block); } catch (err) { t.equal((err as NodeJS.ErrnoException).code, 'ENOSPC', 'the disk is full'); } finally { closeSync(fd); }
  await send(20);

  const failed = () => stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => /writing to the file failed/.test(l.msg));
  const line = await eventually(async () => failed(), (l) => l !== undefined, 10_000);
  t.equal(line?.error, 'database or disk is full', 'the real cause is logged');
  t.notMatch(stdout(), /cannot rollback/);
  const count = async () => metricValue(await metricsText(url), 'gateway_store_write_failures_total') ?? 0;
  t.ok(await count() >= 1, 'and counted');

  unlinkSync(filler);
  // SQLite resolves /proc/PID/root to this namespace's "/": the file is read from a copy.
  const written = async () => {
    const copy = mkdtempSync(join(dir, 'copy-'));
    for (const f of ['gateway.db', 'gateway.db-wal']) copyFileSync(join(disk, f), join(copy, f));
    const reader = new (sqlite().DatabaseSync)(join(copy, 'gateway.db'));
    try { return (reader.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n; } finally { reader.close(); }
  };
  t.equal(await eventually(written, (n) => n === 22, 10_000), 22, 'once space is free, every record held meanwhile is written');
  const settled = await count();
  await send(1);
  await eventually(written, (n) => n === 23, 10_000);
  t.equal(await count(), settled, 'and no write fails any more');
});
