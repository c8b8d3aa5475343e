// Opens the file store's SQLite database: one owner (a lock file held exclusively), WAL, a commit that survives power
// loss, the tables.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { sqlite } from './sqlite.ts';
import { COUNTER_FIELDS } from '../rollup.ts';

/** Bumped when the tables change shape; a file of another version is refused rather than misread. */
export const SCHEMA_VERSION = 2;

const TABLES = `
CREATE TABLE IF NOT EXISTS keys (sha256 TEXT PRIMARY KEY, id TEXT NOT NULL, json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS keys_id ON keys (id);
-- Keyed by time within a key, so an insert lands at the end of the index, not on a random page (docs/performance.md).
CREATE TABLE IF NOT EXISTS records (
  key_id TEXT NOT NULL, request_id TEXT NOT NULL, time INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (key_id, time, request_id));
CREATE INDEX IF NOT EXISTS records_time ON records (time, request_id);
CREATE TABLE IF NOT EXISTS ledgers (key_id TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rollups (
  key_id TEXT NOT NULL, kind TEXT NOT NULL, date TEXT NOT NULL, hour INTEGER NOT NULL, model TEXT NOT NULL,
  ${COUNTER_FIELDS.map((f) => `${f} INTEGER NOT NULL`).join(', ')},
  PRIMARY KEY (key_id, kind, date, hour, model));
CREATE INDEX IF NOT EXISTS rollups_date ON rollups (date);
CREATE TABLE IF NOT EXISTS tpm (key_id TEXT NOT NULL, minute INTEGER NOT NULL, tokens INTEGER NOT NULL, PRIMARY KEY (key_id, minute));
CREATE TABLE IF NOT EXISTS rate (
  key_id TEXT NOT NULL, second INTEGER NOT NULL, requests INTEGER NOT NULL, tokens INTEGER NOT NULL, PRIMARY KEY (key_id, second));
-- The admissions of one key in one epoch second that one batch wrote: their milliseconds into the second (\`ats\`, comma-
-- separated), named by the first one's request id (a batch written twice replaces its own rows).
CREATE TABLE IF NOT EXISTS rpm (
  key_id TEXT NOT NULL, second INTEGER NOT NULL, id TEXT NOT NULL, ats TEXT NOT NULL, PRIMARY KEY (key_id, second, id));
CREATE TABLE IF NOT EXISTS accounts (grp TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (grp, id));
CREATE TABLE IF NOT EXISTS bindings (
  grp TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, account TEXT NOT NULL, expires INTEGER NOT NULL,
  PRIMARY KEY (grp, kind, name));
CREATE TABLE IF NOT EXISTS conversations (
  key_id TEXT NOT NULL, id TEXT NOT NULL, value TEXT NOT NULL, expires INTEGER NOT NULL, PRIMARY KEY (key_id, id));
`;

export interface OpenFile { db: DatabaseSync; close(): void }

/**
 * The owner's lock (PATH.lock, held exclusively until close or death): a second gateway on the file fails here instead
 * of both writing their own view, while the store stays readable (sqlite3 PATH ".backup COPY").
 */
function ownerLock(path: string): DatabaseSync {
  const lock = new (sqlite().DatabaseSync)(`${path}.lock`);
  try {
    lock.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = OFF; BEGIN EXCLUSIVE; COMMIT;');
    return lock;
  } catch (err) {
    lock.close();
    const busy = /locked|busy/i.test((err as Error).message);
    throw busy ? new Error(`in use by another gateway process (${(err as Error).message}); give each process its own store.path, or share store.redis`) : err;
  }
}

/** The files hold usage and prompts: the gateway's user alone may read them (SQLite would make them 0644). */
function ownerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  for (const file of [path, `${path}.lock`]) closeSync(openSync(file, 'a', 0o600));
  for (const file of [path, `${path}.lock`, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
}

/** Opens (or creates) the store for its one owner; WAL, and FULL sync: one fsync a second, off the gateway's thread. */
export function openDatabase(path: string): OpenFile {
  ownerOnly(path);
  const lock = ownerLock(path);
  let db: DatabaseSync | undefined;
  try {
    // A reader (a backup) may hold a lock for a moment: wait for it rather than fail.
    db = new (sqlite().DatabaseSync)(path, { timeout: 5000 });
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
    db.exec('BEGIN IMMEDIATE');
    const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    if (version > SCHEMA_VERSION) throw new Error(`written by a newer gateway (schema ${version}, this one reads ${SCHEMA_VERSION})`);
    // Schema 1 was a development layout that no release wrote (0.1.0 writes 2); a new file is version 0.
    if (version > 0 && version < SCHEMA_VERSION) throw new Error(`written by a development build before 0.1.0 (schema ${version}, this one reads ${SCHEMA_VERSION}): start from a new store.path`);
    db.exec(TABLES);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
    const opened = db;
    return { db: opened, close: () => { opened.close(); lock.close(); } };
  } catch (err) {
    db?.close();
    lock.close();
    throw err;
  }
}
