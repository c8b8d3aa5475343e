// FileStore across a close and reopen, a kill -9 and a second owner: everything but leases comes back exactly as the
// memory store held it, the file keeps no record memory dropped, one process owns the file while others may read it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import t from 'tap';
import { FileStore } from '../../core/store/file/store.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import type { StoreOptions } from '../../core/store/options.ts';
import type { Store } from '../../core/store/types.ts';
import { DAY, HOUR, MIN, T0, admitReq, issued, record, type Tap } from './fixtures.ts';

const silent = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'gw-file-reopen-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `s${++n}`, 'gateway.db');

/** Keys, limits, ledger, rollups in several hours, days and models, accounts, bindings: the same calls on any store. */
async function workload(s: Store): Promise<void> {
  await s.putKey(issued({ id: 'kept', sha256: 'sha-kept', limits: { rpm: 3, quota_usd: 5 } }));
  await s.putKey(issued({ id: 'changed', sha256: 'sha-changed' }));
  await s.putKey(issued({ id: 'gone', sha256: 'sha-gone' }));
  await s.updateKey('changed', { disabled: true, limits: { usd_1d: 2 } });
  await s.deleteKey('gone');
  const limits = { rpm: 3, tpm: 10_000, concurrency: 2, quota_usd: 5, usd_5h: 1 };
  const now = T0 + 30 * MIN;
  for (let i = 0; i < 3; i++) {
    const a = await s.admit(admitReq(limits, now + i, { keyId: 'kept', requestId: `adm-${i}`, estimatedTokens: 500 }));
    if (!a.ok) throw new Error(`admit ${i}: ${a.reason}`);
    if (i === 2) await s.release(a.admission);
    else await s.settle(record({ key_id: 'kept', request_id: `adm-${i}`, time: now + i, input_tokens: 200, output_tokens: 50, cost: 0.4 }), a.admission, limits);
  }
  for (let i = 0; i < 40; i++) {
    await s.settle(record({
      key_id: i % 3 ? 'kept' : 'other', request_id: `r-${i}`, time: T0 - (i % 4) * DAY - (i % 5) * 3 * HOUR - i * 1000,
      model: i % 2 ? 'model-a' : 'model-b', input_tokens: 10 + i, output_tokens: i, cache_read_tokens: i % 3, cost: 0.001 * i, duration_ms: 5 + i,
    }), undefined, {});
  }
  const c = [{ id: 'acct-1', priority: 1, weight: 1, concurrency: 2 }, { id: 'acct-2', priority: 2, weight: 3, concurrency: 1 }];
  const got = await s.acquireAccount({ group: 'g', requestId: 'acq-1', now, candidates: c, leaseMs: 30_000 });
  if (!got.ok) throw new Error('acquire');
  await s.releaseAccount(got.lease, { succeededAt: now, bind: [{ kind: 'sticky', name: 'session-1', ttlMs: 60_000 }] });
  await s.acquireAccount({ group: 'g', requestId: 'held', now, candidates: c, leaseMs: 30_000 }); // a lease: not kept
  await s.cooldown('g', 'acct-2', now + 5 * MIN, 'rate_limited');
  await s.bind('g', 'pin', 'resp-1', 'acct-2', 60_000);
  await s.bind('g', 'pin', 'resp-unbound', 'acct-2', 60_000);
  await s.bind('g', 'pin', 'resp-unbound', 'acct-2', 0);
  await s.putConversation('kept', 'resp_kept', '{"messages":["a"]}', 60_000);
  await s.putConversation('kept', 'resp_replaced', '{"v":1}', 60_000);
  await s.putConversation('kept', 'resp_replaced', '{"v":2}', 60_000);
  await s.putConversation('kept', 'resp_expired', '{"v":0}', 1);
}

/** Every read a client of the store can make on what workload wrote. */
async function reads(s: Store) {
  const now = T0 + 30 * MIN + 30_000; // the workload's minute: its rpm, tpm and per-second counts still count
  const usage = async (key: string) => ({
    utc: await s.keyUsage(key, { days: 7, now }),
    // Some UTC days fall on two local dates there: the hourly rollups (per model too) decide which.
    kolkata: await s.keyUsage(key, { days: 7, now, timezone: 'Asia/Kolkata' }),
    kolkataDay: await s.keyUsage(key, { days: 7, from: '2025-01-14', to: '2025-01-14', now, timezone: 'Asia/Kolkata' }),
  });
  return {
    keys: await s.listKeys(),
    gone: await s.getKey('sha-gone'),
    kept: await usage('kept'),
    other: await usage('other'),
    records: await s.records({ limit: 100 }),
    keptRecords: await s.records({ key: 'kept', limit: 100 }),
    accounts: await s.accountStates('g', ['acct-1', 'acct-2'], now),
    sticky: await s.bound('g', 'sticky', 'session-1'),
    pin: await s.bound('g', 'pin', 'resp-1'),
    unbound: await s.bound('g', 'pin', 'resp-unbound'),
    conversations: [await s.getConversation('kept', 'resp_kept'), await s.getConversation('kept', 'resp_replaced'),
      await s.getConversation('kept', 'resp_expired'), await s.getConversation('other', 'resp_kept')],
    // The rpm limit (3) is spent in this minute; 500 tokens were used in it (two settled 250 each, one released).
    rpm: await s.admit(admitReq({ rpm: 3 }, now, { keyId: 'kept', requestId: 'after' })),
    tpm: await s.admit(admitReq({ tpm: 999 }, now, { keyId: 'kept', requestId: 'tpm', estimatedTokens: 500 })),
  };
}

async function reopened(t: Tap, options: StoreOptions = {}) {
  const path = freshPath();
  const twin = new MemoryStore(options);
  const first = await FileStore.open(path, options, silent);
  await workload(twin);
  await workload(first);
  await first.close();
  const again = await FileStore.open(path, options, silent);
  t.teardown(() => again.close());
  return { twin, again, path };
}

t.test('reopened, the file store holds what the memory store holds (leases aside)', async (t) => {
  const { twin, again } = await reopened(t);
  const want = await reads(twin);
  t.equal(want.kept.utc.total.requests, 28, 'the workload settled something to compare');
  t.strictSame(want.conversations, ['{"messages":["a"]}', '{"v":2}', undefined, undefined], 'conversations: kept, replaced, expired, per key');
  t.strictSame([want.rpm.ok, want.tpm.ok, want.kept.utc.lastMinute.requests], [false, false, 2], 'rpm and tpm are spent; two settled this minute');
  // The lease taken in the workload ("held") is gone after a restart; the memory twin still holds it.
  const got = await reads(again);
  t.strictSame(got.accounts, want.accounts.map((a) => ({ ...a, inFlight: 0 })));
  t.strictSame({ ...got, accounts: [] }, { ...want, accounts: [] });
});

t.test('reopened with small caps, the records are the newest ones, as memory keeps them', async (t) => {
  const options = { recordsPerKey: 5, recordsTotal: 8, retentionDays: 2 };
  const { twin, again, path } = await reopened(t, options);
  const want = await reads(twin);
  t.equal(want.records.records.length, 8);
  t.equal(want.keptRecords.records.length, 5);
  const got = await reads(again);
  t.strictSame({ ...got, accounts: [] }, { ...want, accounts: [] });
  await again.close();
  const db = new DatabaseSync(path);
  t.teardown(() => db.close());
  const rows = (db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n;
  t.ok(rows <= 8 + 5, `the file keeps no record memory has dropped (${rows} rows)`);
});

t.test('one process owns the file: a second open is refused while the first is open', async (t) => {
  const path = freshPath();
  const first = await FileStore.open(path, {}, silent);
  await t.rejects(FileStore.open(path, {}, silent), /^store\.path .*gateway\.db: in use by another gateway process \(database is locked\)/);
  await first.close();
  const second = await FileStore.open(path, {}, silent);
  await second.close();
});

t.test('a file written by a newer gateway is refused, not misread', async (t) => {
  const path = freshPath();
  await (await FileStore.open(path, {}, silent)).close();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA user_version = 99');
  db.close();
  await t.rejects(FileStore.open(path, {}, silent), /schema 99/);
});

t.test('while a process holds the store another cannot open it, yet can read it; after a kill -9 the last flush is there', async (t) => {
  const path = freshPath();
  const child = spawn(process.execPath, [fileURLToPath(new URL('./file-holder.ts', import.meta.url)), path, '25'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => { child.kill('SIGKILL'); });
  const [line] = await once(child.stdout!, 'data') as [Buffer];
  t.equal(line.toString().trim(), 'settled');
  await t.rejects(FileStore.open(path, {}, silent), /database is locked/, 'the holder owns the file');
  const reader = new DatabaseSync(path, { readOnly: true });
  t.equal((reader.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n, 25, 'a reader (a backup) reads what the timer wrote');
  reader.close();
  child.kill('SIGKILL');
  await once(child, 'exit');
  const s = await FileStore.open(path, {}, silent);
  t.teardown(() => s.close());
  const u = await s.keyUsage('held', { days: 1, now: T0 });
  t.strictSame([u.total.requests, u.total.cost], [25, 12.5], 'written by the timer, no close needed');
});

