// The file store's writer thread stops (it crashed): the store goes on from memory, and no record's text is lost, whether
// its batch was on its way to the thread, still in the journal, or settled after the stop.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import t from 'tap';
import { FileStore } from '../../core/store/file/store.ts';
import { writerThread } from '../../core/store/file/thread.ts';
import type { UsageRecord } from '../../core/store/types.ts';
import { T0, globalEntry, record } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-writer-stop-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('records of every stage of the way read whole after the writer stopped', async (t) => {
  const lines: string[] = [];
  const log = pino({ level: 'error' }, { write: (l: string) => { lines.push(l); } });
  const store = await FileStore.open(join(dir, 'gateway.db'), {}, log);
  t.teardown(() => store.close());
  const settle = (i: number) => store.settle(record({ request_id: `w-${String(i).padStart(2, '0')}`, key_id: 'a', time: T0 + i, model: `m-${i % 2}`, input_tokens: i }), undefined, {});
  for (let i = 0; i < 5; i++) await settle(i);
  await store.flush(); // written
  for (let i = 5; i < 10; i++) await settle(i);
  void store.flush(); // on its way to the thread
  for (let i = 10; i < 15; i++) await settle(i); // in the journal
  const thread = writerThread();
  t.ok(thread, 'the writer runs');
  // Not awaited: under tap's loaders the promise can outlive the thread's handle, and nothing else would hold the loop.
  void thread!.terminate();
  for (let waited = 0; !/the file writer stopped/.test(lines.join('')) && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
  t.match(lines.join(''), /the file writer stopped/, 'the stop is logged');
  for (let i = 15; i < 20; i++) await settle(i); // after the stop
  await store.flush();
  const got = (await store.records({ key: 'a', limit: 100 })).records;
  t.strictSame(got.map((r: UsageRecord) => r.request_id), Array.from({ length: 20 }, (_, i) => `w-${String(19 - i).padStart(2, '0')}`), 'all 20, newest first');
  t.strictSame(got.map((r) => r.input_tokens), Array.from({ length: 20 }, (_, i) => 19 - i), 'each with its own text');
});

t.test('a write refused (another connection holds the file\'s write lock): texts stay readable, and it is written once the lock goes', async (t) => {
  const lines: string[] = [];
  const log = pino({ level: 'error' }, { write: (l: string) => { lines.push(l); } });
  const path = join(dir, 'locked.db');
  const store = await FileStore.open(path, {}, log);
  t.teardown(() => store.close());
  const settle = (i: number) => store.settle(record({ request_id: `l-${String(i).padStart(2, '0')}`, key_id: 'a', time: T0 + i, input_tokens: i }), undefined, {});
  const page = async () => (await store.records({ key: 'a', limit: 100 })).records;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `l-${String(n - 1 - i).padStart(2, '0')}`);
  const inFile = () => {
    const db = new DatabaseSync(path, { readOnly: true });
    try { return (db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n; } finally { db.close(); }
  };
  for (let i = 0; i < 5; i++) await settle(i);
  await store.flush();
  t.equal(inFile(), 5, 'the first batch is in the file');

  const blocker = new DatabaseSync(path);
  blocker.exec('BEGIN IMMEDIATE');
  for (let i = 5; i < 10; i++) await settle(i);
  await store.flush();
  t.match(lines.join(''), /writing to the file failed/, 'the refused write is logged');
  for (let i = 10; i < 15; i++) await settle(i);
  let got = await page();
  t.strictSame(got.map((r) => r.request_id), ids(15), 'while refused: all 15 records read');
  t.strictSame(got.map((r) => r.input_tokens), Array.from({ length: 15 }, (_, i) => 14 - i), 'each with its own text');

  blocker.exec('ROLLBACK');
  blocker.close();
  await store.flush();
  for (let waited = 0; inFile() < 15 && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(inFile(), 15, 'once the lock is gone, the batches are written (retried every second)');
  t.type((await globalEntry(store, 'l-12'))?.json, 'string', 'a record settled while refused holds its text on its entry');
  for (let i = 15; i < 20; i++) await settle(i);
  t.equal((await globalEntry(store, 'l-19'))?.json, undefined, 'written again: a new record\'s text waits as bytes, not on its entry');
  await store.flush();
  t.equal(inFile(), 20, 'and the next ones');
  got = await page();
  t.strictSame(got.map((r) => r.request_id), ids(20), 'all 20 read');
  t.strictSame(got.map((r) => r.input_tokens), Array.from({ length: 20 }, (_, i) => 19 - i), 'each with its own text');
});
