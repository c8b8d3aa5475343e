// A store file of another schema is refused and left as it was (schema 1 was a development layout no release wrote).
// And schema 2's rpm rows: a few per key and second however many requests, named so that a batch written twice counts
// once.
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import t from 'tap';
import { FileStore } from '../../core/store/file/store.ts';
import { SCHEMA_VERSION } from '../../core/store/file/db.ts';
import { Journal, type MemoryState } from '../../core/store/file/journal.ts';
import { KeyLedger } from '../../core/store/memory/ledger.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { MIN, T0, admitReq, record } from './fixtures.ts';

const silent = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'gw-file-upgrade-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => {
  const d = join(dir, `s${++n}`);
  mkdirSync(d);
  return join(d, 'gateway.db');
};

/** The tables schema 1 had and this test needs (the rest kept their shape). */
const SCHEMA_1 = `
CREATE TABLE records (key_id TEXT NOT NULL, request_id TEXT NOT NULL, time INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (key_id, request_id));
CREATE INDEX records_time ON records (time, request_id);
CREATE TABLE rpm (key_id TEXT NOT NULL, request_id TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (key_id, request_id));
CREATE INDEX rpm_at ON rpm (at);
PRAGMA user_version = 1;`;

const NOW = T0 + 30 * MIN;

for (const [version, refusal] of [[1, /development build before 0\.1\.0 \(schema 1, this one reads 2\)/], [SCHEMA_VERSION + 1, /written by a newer gateway/]] as const) {
  t.test(`a schema ${version} file is refused and left as it was`, async (t) => {
    const path = freshPath();
    const old = new DatabaseSync(path);
    old.exec(SCHEMA_1.replace('user_version = 1', `user_version = ${version}`));
    old.prepare('INSERT INTO records VALUES (?, ?, ?, ?)').run('k', 'r-1', NOW, 'kept');
    old.close();
    await t.rejects(FileStore.open(path, {}, silent), refusal);
    const db = new DatabaseSync(path, { readOnly: true });
    t.teardown(() => db.close());
    t.equal((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, version, 'its version unchanged');
    t.strictSame((db.prepare('SELECT json FROM records').all() as { json: string }[]).map((r) => r.json), ['kept'], 'its rows untouched');
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    t.strictSame(tables, ['records', 'rpm'], 'no table made');
  });
}

const state = (): MemoryState => ({ keys: new Map(), ledgers: new Map([['k', new KeyLedger()], ['j', new KeyLedger()]]), accounts: {} as never, conversations: {} as never });

t.test('rpm rows: one per key, second and batch, named by its first admission', async (t) => {
  const s = state();
  const j = new Journal();
  const admit = (key: string, id: string, at: number) => {
    s.ledgers.get(key)!.rpm.set(id, at);
    j.admitted(key, id, at, undefined);
  };
  admit('k', 'a-1', NOW + 5);
  admit('j', 'b-1', NOW + 6);
  admit('k', 'a-2', NOW + 999);
  admit('k', 'a-3', NOW + 1000);
  admit('k', 'a-4', NOW + 7);
  const sec = Math.floor(NOW / 1000);
  t.strictSame(j.take(s, 1).rpm, [
    { key: 'k', second: sec, id: 'a-1', ats: `${NOW % 1000 + 5},${NOW % 1000 + 999},${NOW % 1000 + 7}` },
    { key: 'j', second: sec, id: 'b-1', ats: `${NOW % 1000 + 6}` },
    { key: 'k', second: sec + 1, id: 'a-3', ats: `${(NOW + 1000) % 1000}` },
  ]);
  admit('k', 'a-5', NOW + 10);
  t.strictSame(j.take(s, 2).rpm, [{ key: 'k', second: sec, id: 'a-5', ats: `${NOW % 1000 + 10}` }], 'the next batch: a row of its own for the same second');
  admit('k', 'a-6', NOW + 20);
  admit('k', 'a-7', NOW + 21);
  admit('k', 'a-8', NOW + 22);
  s.ledgers.get('k')!.rpm.delete('a-6');
  s.ledgers.get('k')!.rpm.set('a-8', NOW + 30);
  t.strictSame(j.take(s, 3).rpm, [{ key: 'k', second: sec, id: 'a-6', ats: `${NOW % 1000 + 21}` }],
    'only what the ledger still holds at that time (a-7), under the name of the first admission of its second (a-6, gone since)');
});

t.test('1 000 admissions of a second are one row; reopened, all 1 000 count', async (t) => {
  const path = freshPath();
  const s = await FileStore.open(path, {}, silent);
  for (let i = 0; i < 1000; i++) {
    const a = await s.admit(admitReq({ rpm: 1000 }, NOW + (i % 1000), { keyId: 'k', requestId: `r-${i}` }));
    if (!a.ok) throw new Error(`admit ${i}`);
  }
  await s.close();
  const db = new DatabaseSync(path, { readOnly: true });
  t.equal((db.prepare('SELECT count(*) AS n FROM rpm').get() as { n: number }).n, Math.floor((NOW + 999) / 1000) - Math.floor(NOW / 1000) + 1, 'a row per second touched');
  db.close();
  const again = await FileStore.open(path, {}, silent);
  t.teardown(() => again.close());
  t.match(await again.admit(admitReq({ rpm: 1000 }, NOW + 1000, { keyId: 'k', requestId: 'one-more' })), { ok: false, reason: 'rpm', retryAfterMs: 59_000 }, 'the window is full until the first leaves it');
  t.match(await again.admit(admitReq({ rpm: 1001 }, NOW + 1000, { keyId: 'k', requestId: 'one-more' })), { ok: true }, 'one more fits under 1 001');
});
