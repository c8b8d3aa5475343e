// The file store keeps its records' texts in memory only until their batch is written: from then on a page's texts
// are read back from the file. Reads are the same as the memory store's (every filter, paging, per key and overall,
// capped and after a reopen); a record pruned from the file is gone from a page; and the records kept cost a fraction
// of the memory the memory store's cost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import t from 'tap';
import { FLUSH_BYTES, FLUSH_MS, FileStore } from '../../core/store/file/store.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import type { RecordFilter, Store, UsageRecord } from '../../core/store/types.ts';
import { T0, globalEntry, record } from './fixtures.ts';

const silent = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'gw-file-texts-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `s${++n}`, 'gateway.db');
const options = { recordsPerKey: 30, recordsTotal: 50 };

/** The records `records()` lists, every page of them. */
async function all(s: Store, filter: Omit<RecordFilter, 'limit' | 'cursor'>, limit = 7): Promise<UsageRecord[]> {
  const out: UsageRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await s.records({ ...filter, limit, cursor });
    out.push(...page.records);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

const FILTERS: Omit<RecordFilter, 'limit' | 'cursor'>[] = [
  {}, { key: 'a' }, { key: 'b' }, { model: 'm-2' }, { key: 'a', status: { min: 500, max: 599 } }, { from: T0 + 20_000, to: T0 + 60_000 },
];

const settleAll = async (s: Store) => {
  for (let i = 0; i < 80; i++) {
    // Out of order now and then, three models, two keys, some failed.
    await s.settle(record({
      request_id: `t-${String(i).padStart(3, '0')}`, key_id: i % 3 ? 'a' : 'b', time: T0 + i * 1000 - (i % 9 === 0 ? 2500 : 0),
      model: `m-${i % 3}`, status: i % 5 ? 200 : 502, input_tokens: i, output_tokens: 2 * i,
    }), undefined, {});
  }
};


t.test('a batch goes once its records reach FLUSH_BYTES, without waiting for the timer', async (t) => {
  const path = freshPath();
  const file = await FileStore.open(path, { recordsPerKey: 10_000, recordsTotal: 10_000 }, silent);
  t.teardown(() => file.close());
  const rows = () => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  // Records of ~2 KB (a long model name) until the batch's bytes pass FLUSH_BYTES, settled without a timer able to run
  // in between (each settle awaits only microtasks). Then they must be in the file well before the timer's second: the
  // timer alone (whose phase is unknown) would write them within 200 ms one time in five, so three rounds in a row
  // within 200 ms would be chance less than one time in a hundred.
  const model = 'm'.repeat(2000);
  const n = Math.ceil(FLUSH_BYTES / 2000) + 1;
  let total = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < n; i++) await file.settle(record({ request_id: `big-${round}-${i}`, time: T0 + total + i, model }), undefined, {});
    total += n;
    const settled = Date.now();
    let written = rows();
    while (written < total && Date.now() - settled < 200) {
      await new Promise((r) => setTimeout(r, 5));
      written = rows();
    }
    t.equal(written, total, `round ${round + 1}: all ${n} records in the file ${Date.now() - settled} ms after they were settled (the timer: every ${FLUSH_MS} ms)`);
  }
});

t.test('written records: texts let go, read back from the file; every read equals the memory store\'s', async (t) => {
  const mem = new MemoryStore(options);
  const path = freshPath();
  const file = await FileStore.open(path, options, silent);
  t.teardown(() => file.close());
  await settleAll(mem);
  await settleAll(file);
  t.equal((await globalEntry(file, 't-079'))?.json, undefined, 'before its batch is written, the newest record\'s text is not on its entry (it waits as bytes)');
  for (const f of FILTERS) t.strictSame(await all(file, f), await all(mem, f), `before the write: ${JSON.stringify(f)}`);
  await file.flush();
  t.equal((await globalEntry(file, 't-079'))?.json, undefined, 'nor once written');
  t.equal((await globalEntry(file, 't-079'))?.id, 't-079', 'but the record is still kept');
  for (const f of FILTERS) {
    const want = await all(mem, f);
    t.ok(want.length > 0, `${JSON.stringify(f)}: some records`);
    t.strictSame(await all(file, f), want, `after the write, read from the file: ${JSON.stringify(f)}`);
  }

  // A record the file no longer holds (as its pruning would leave it) is gone from a page, not an error.
  const db = new DatabaseSync(path);
  db.prepare('DELETE FROM records WHERE request_id = ?').run('t-079');
  db.close();
  const newest = (await file.records({ limit: 2 })).records.map((r) => r.request_id);
  t.notOk(newest.includes('t-079'), `gone: ${newest.join(', ')}`);
  t.equal(newest.length, 2, 'the page is still full');
});

t.test('after a reopen: the records are indexed without their texts and read the same', async (t) => {
  const mem = new MemoryStore(options);
  await settleAll(mem);
  const path = freshPath();
  const first = await FileStore.open(path, options, silent);
  await settleAll(first);
  await first.close();
  const again = await FileStore.open(path, options, silent);
  t.teardown(() => again.close());
  t.equal((await globalEntry(again, 't-079'))?.json, undefined, 'loaded without its text');
  for (const f of FILTERS) t.strictSame(await all(again, f), await all(mem, f), JSON.stringify(f));
});

t.test('memory: 20 000 written records cost under half of what the memory store\'s cost', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const big = { recordsPerKey: 100_000, recordsTotal: 100_000 };
  const used = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
  const fill = async (s: Store) => {
    for (let i = 0; i < 20_000; i++) {
      await s.settle(record({ request_id: `m-${i}-${Math.random().toString(36).slice(2)}`, key_id: 'a', time: T0 + i, client_request_id: `client/${i}`.padEnd(120, 'x') }), undefined, {});
    }
  };
  const file = await FileStore.open(freshPath(), big, silent);
  t.teardown(() => file.close());
  const base = used();
  await fill(file);
  await file.flush();
  const fileBytes = used() - base;
  const mem = new MemoryStore(big);
  const base2 = used();
  await fill(mem);
  const memBytes = used() - base2;
  t.ok(memBytes > 20_000 * 400, `the memory store holds its texts: ${(memBytes / 20_000).toFixed(0)} bytes per record`);
  t.ok(fileBytes < memBytes / 2, `the file store: ${(fileBytes / 20_000).toFixed(0)} bytes per record, against ${(memBytes / 20_000).toFixed(0)}`);
  t.equal((await file.records({ key: 'a', limit: 1 })).records[0]?.client_request_id?.length, 120, 'and its newest record reads whole');
});
