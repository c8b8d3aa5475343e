// Invented model names on the file store (invented-models-suite.ts): its rollups table holds a bounded number of models.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import t from 'tap';
import { utcDate } from '../../core/store/units.ts';
import { inventedModelsSuite } from './invented-models-suite.ts';

// 2 000+ requests through one process (client, gateway, simulator): ~12 s of CPU, past 60 s on a loaded machine.
t.setTimeout(150_000);

const dir = mkdtempSync(join(tmpdir(), 'gw-invented-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'gateway.db');

await inventedModelsSuite(t, `store: { path: "${path}" }`, async () => {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT DISTINCT model FROM rollups WHERE key_id = 'inventor' AND kind = 'dm' AND date = ?").all(utcDate(Date.now()));
    return rows.map((r) => String(r.model));
  } finally {
    db.close();
  }
});
