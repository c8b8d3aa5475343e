// The file store's record caps on disk (file/tables.ts prune): what stays is exactly what the memory store keeps, the
// newest `recordsPerKey` of each key and the newest `recordsTotal` overall, in (time, request id) order, whatever the
// keys' sizes and however many records share a millisecond. Checked against that rule computed here, on random tables.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDatabase } from '../../core/store/file/db.ts';
import { FileTables } from '../../core/store/file/tables.ts';

interface Rec { key: string; id: string; time: number }

/** The rule itself: a record stays when it is among its key's newest perKey or the newest total. */
function kept(records: Rec[], perKey: number, total: number): string[] {
  const newestFirst = [...records].sort((a, b) => b.time - a.time || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const seen = new Map<string, number>();
  const stay: string[] = [];
  newestFirst.forEach((r, overall) => {
    const own = (seen.get(r.key) ?? 0) + 1;
    seen.set(r.key, own);
    if (own <= perKey || overall < total) stay.push(r.id);
  });
  return stay.sort();
}

let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

t.test('prune keeps the newest of each key and the newest overall, exactly', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-prune-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  // [records, keys, perKey, total]: one key far past both caps; many keys, some past their cap; caps that keep all;
  // records crowded into few milliseconds (ties broken by request id).
  for (const [count, keys, perKey, total, spread] of [[3000, 1, 100, 1000, 100000], [3000, 12, 150, 800, 100000], [500, 5, 1000, 1000, 100000],
    [2000, 4, 50, 300, 40], [2000, 30, 1, 1, 1000]] as const) {
    const file = openDatabase(join(dir, `p${++n}.db`));
    const tables = new FileTables(file.db);
    const put = file.db.prepare('INSERT INTO records (key_id, request_id, time, json) VALUES (?, ?, ?, ?)');
    const records: Rec[] = [];
    // Key sizes skewed: key i gets a share proportional to i + 1 squared.
    const weights = Array.from({ length: keys }, (_, i) => (i + 1) ** 2);
    const sum = weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < count; i++) {
      let pick = random() * sum;
      let k = 0;
      while (pick >= weights[k]) pick -= weights[k++];
      const r = { key: `key-${k}`, id: `${Math.floor(random() * 1e9).toString(16).padStart(8, '0')}-${i}`, time: 1_795_870_000_000 + Math.floor(random() * spread) };
      records.push(r);
      put.run(r.key, r.id, r.time, '{}');
    }
    tables.prune({ retentionMs: 1e12, recordsPerKey: perKey, recordsTotal: total });
    const got = (file.db.prepare('SELECT request_id FROM records ORDER BY request_id').all() as { request_id: string }[]).map((r) => r.request_id);
    const want = kept(records, perKey, total);
    t.ok(want.length < count || count <= total, `${count} records, ${keys} keys, caps ${perKey}/${total}: ${want.length} stay`);
    t.strictSame(got, want, `${count} records, ${keys} keys, caps ${perKey} per key and ${total} overall, times within ${spread} ms`);
    file.close();
  }
});
