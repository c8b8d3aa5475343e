// Reads a file store's tables at start, on the gateway's own thread: nothing is served yet, and the rows need no copy
// from the writer thread (100 000 records are a second of structured cloning).
import type { DatabaseSync } from 'node:sqlite';
import type { Loaded, RollupKind } from './rows.ts';
import { COUNTER_FIELDS } from '../rollup.ts';
import { sqlite } from './sqlite.ts';

type Row = any[];

/** Every table of the file at `path` (opened by the writer first, so it exists), records oldest first. */
export function loadFile(path: string): Loaded {
  const db = new (sqlite().DatabaseSync)(path, { readOnly: true });
  try {
    return loadTables(db);
  } finally {
    db.close();
  }
}

function loadTables(db: DatabaseSync): Loaded {
  // Rows as arrays: node:sqlite builds them several times faster than objects.
  const all = (sql: string): Row[] => {
    const statement = db.prepare(sql);
    statement.setReturnArrays(true);
    return statement.all() as unknown as Row[];
  };
  return {
    keys: all('SELECT sha256, id, json FROM keys').map(([sha256, id, json]) => ({ sha256, id, json })),
    records: all('SELECT key_id, request_id, time, json FROM records ORDER BY time, request_id').map(([key, id, time, json]) => ({ key, id, time, json })),
    ledgers: all('SELECT key_id, json FROM ledgers').map(([key, json]) => ({ key, json })),
    rollups: all(`SELECT key_id, kind, date, hour, model, ${COUNTER_FIELDS.join(', ')} FROM rollups`).map(([key, kind, date, hour, model, ...counters]) => ({
      key, kind: kind as RollupKind, date, hour, model, counters,
    })),
    tpm: all('SELECT key_id, minute, tokens FROM tpm').map(([key, minute, tokens]) => ({ key, minute, tokens })),
    rate: all('SELECT key_id, second, requests, tokens FROM rate').map(([key, second, requests, tokens]) => ({ key, second, counts: [requests, tokens] })),
    rpm: all('SELECT key_id, second, id, ats FROM rpm ORDER BY key_id, second, rowid').map(([key, second, id, ats]) => ({ key, second, id, ats })),
    accounts: all('SELECT grp, id, json FROM accounts').map(([group, id, json]) => ({ group, id, json })),
    bindings: all('SELECT grp, kind, name, account, expires FROM bindings').map(([group, kind, name, account, expires]) => ({ group, kind, name, account, expires })),
    conversations: all('SELECT key_id, id, value, expires FROM conversations ORDER BY expires').map(([key, id, value, expires]) => ({ key, id, value, expires })),
  };
}
