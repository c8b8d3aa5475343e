// The file store's writes: one batch in one transaction, and pruning what the memory store ages out (load.ts reads).
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Batch } from './rows.ts';
import { readRecords } from './record-bytes.ts';
import { COUNTER_FIELDS } from '../rollup.ts';
import { DAY_MS, HOUR_ROLLUP_DAYS, RATE_KEPT_SECONDS, ROLLUP_DAYS, RPM_WINDOW_MS, utcDate } from '../units.ts';

type Row = Record<string, any>;
const FIELDS = COUNTER_FIELDS.join(', ');

export class FileTables {
  private readonly db: DatabaseSync;
  private readonly put: Record<string, StatementSync>;
  private readonly drop: Record<string, StatementSync>;

  constructor(db: DatabaseSync) {
    this.db = db;
    const q = (sql: string) => db.prepare(sql);
    this.put = {
      key: q('INSERT OR REPLACE INTO keys (sha256, id, json) VALUES (?, ?, ?)'),
      record: q('INSERT OR IGNORE INTO records (key_id, request_id, time, json) VALUES (?, ?, ?, ?)'),
      ledger: q('INSERT OR REPLACE INTO ledgers (key_id, json) VALUES (?, ?)'),
      rollup: q(`INSERT OR REPLACE INTO rollups (key_id, kind, date, hour, model, ${FIELDS}) VALUES (?, ?, ?, ?, ?, ${COUNTER_FIELDS.map(() => '?').join(', ')})`),
      tpm: q('INSERT OR REPLACE INTO tpm (key_id, minute, tokens) VALUES (?, ?, ?)'),
      rate: q('INSERT OR REPLACE INTO rate (key_id, second, requests, tokens) VALUES (?, ?, ?, ?)'),
      rpm: q('INSERT OR REPLACE INTO rpm (key_id, second, id, ats) VALUES (?, ?, ?, ?)'),
      account: q('INSERT OR REPLACE INTO accounts (grp, id, json) VALUES (?, ?, ?)'),
      binding: q('INSERT OR REPLACE INTO bindings (grp, kind, name, account, expires) VALUES (?, ?, ?, ?, ?)'),
      conversation: q('INSERT OR REPLACE INTO conversations (key_id, id, value, expires) VALUES (?, ?, ?, ?)'),
    };
    this.drop = {
      key: q('DELETE FROM keys WHERE id = ?'),
      rollup: q('DELETE FROM rollups WHERE key_id = ? AND kind = ? AND date = ? AND hour = ? AND model = ?'),
      tpm: q('DELETE FROM tpm WHERE key_id = ? AND minute = ?'),
      rate: q('DELETE FROM rate WHERE key_id = ? AND second = ?'),
      account: q('DELETE FROM accounts WHERE grp = ? AND id = ?'),
      binding: q('DELETE FROM bindings WHERE grp = ? AND kind = ? AND name = ?'),
      conversation: q('DELETE FROM conversations WHERE key_id = ? AND id = ?'),
    };
  }

  /** SQLite has rolled back already after some errors (a full disk): a second ROLLBACK would hide the cause. */
  private rollback(): void {
    if (this.db.isTransaction) this.db.exec('ROLLBACK');
  }

  /** One batch, one transaction: all of it or (on an error) none of it. */
  write(b: Batch): void {
    const { put, drop } = this;
    this.db.exec('BEGIN');
    try {
      for (const id of b.keyIds) drop.key.run(id);
      for (const k of b.keys) put.key.run(k.sha256, k.id, k.json);
      for (const r of readRecords(b.records)) put.record.run(r.key, r.id, r.time, r.json);
      for (const l of b.ledgers) put.ledger.run(l.key, l.json);
      for (const r of b.rollups) {
        if (r.counters) put.rollup.run(r.key, r.kind, r.date, r.hour, r.model, ...r.counters);
        else drop.rollup.run(r.key, r.kind, r.date, r.hour, r.model);
      }
      for (const t of b.tpm) t.tokens === null ? drop.tpm.run(t.key, t.minute) : put.tpm.run(t.key, t.minute, t.tokens);
      for (const s of b.rate) s.counts ? put.rate.run(s.key, s.second, ...s.counts) : drop.rate.run(s.key, s.second);
      for (const r of b.rpm) put.rpm.run(r.key, r.second, r.id, r.ats);
      for (const a of b.accounts) a.json === null ? drop.account.run(a.group, a.id) : put.account.run(a.group, a.id, a.json);
      for (const x of b.bindings) x.account === null ? drop.binding.run(x.group, x.kind, x.name) : put.binding.run(x.group, x.kind, x.name, x.account, x.expires);
      for (const c of b.conversations) c.value === null ? drop.conversation.run(c.key, c.id) : put.conversation.run(c.key, c.id, c.value, c.expires);
      this.db.exec('COMMIT');
    } catch (err) {
      this.rollback();
      throw err;
    }
  }

  /**
   * Deletes the records outside both the newest `total` and their key's newest `perKey` (the memory store's caps), by
   * the two edges found through the indexes (docs/performance.md).
   */
  private dropBeyondCaps(perKey: number, total: number): void {
    const edge = this.db.prepare('SELECT time, request_id FROM records ORDER BY time DESC, request_id DESC LIMIT 1 OFFSET ?').get(total - 1) as Row | undefined;
    if (!edge) return;
    const keys = this.db.prepare('SELECT DISTINCT key_id FROM records WHERE (time, request_id) < (?, ?)').all(edge.time, edge.request_id) as Row[];
    const keyEdge = this.db.prepare('SELECT time, request_id FROM records WHERE key_id = ? ORDER BY time DESC, request_id DESC LIMIT 1 OFFSET ?');
    const drop = this.db.prepare('DELETE FROM records WHERE key_id = ? AND (time, request_id) < (?, ?) AND (time, request_id) < (?, ?)');
    for (const { key_id: key } of keys) {
      const own = keyEdge.get(key, perKey - 1) as Row | undefined;
      if (own) drop.run(key, own.time, own.request_id, edge.time, edge.request_id);
    }
  }

  /** Deletes what the memory store no longer holds, aged on its clocks (the newest record, minute, second, rpm entry). */
  prune(o: { retentionMs: number; recordsPerKey: number; recordsTotal: number }): void {
    const newest = (this.db.prepare('SELECT max(time) AS t FROM records').get() as Row).t as number | null;
    this.db.exec('BEGIN');
    try {
      if (newest !== null) {
        this.db.prepare('DELETE FROM records WHERE time < ?').run(newest - o.retentionMs);
        this.dropBeyondCaps(o.recordsPerKey, o.recordsTotal);
        this.db.prepare("DELETE FROM rollups WHERE kind IN ('day', 'dm') AND date < ?").run(utcDate(newest - ROLLUP_DAYS * DAY_MS));
        this.db.prepare("DELETE FROM rollups WHERE kind IN ('hr', 'hm') AND date < ?").run(utcDate(newest - HOUR_ROLLUP_DAYS * DAY_MS));
      }
      this.db.exec('DELETE FROM tpm WHERE minute < (SELECT max(minute) FROM tpm) - 1');
      this.db.exec(`DELETE FROM rate WHERE second <= (SELECT max(second) FROM rate) - ${RATE_KEPT_SECONDS}`);
      // A second's admissions have all left the window once its last millisecond has.
      this.db.exec(`DELETE FROM rpm WHERE second * 1000 + 999 <= (SELECT max(second) FROM rpm) * 1000 - ${RPM_WINDOW_MS}`);
      this.db.prepare('DELETE FROM bindings WHERE expires <= ?').run(Date.now());
      this.db.prepare('DELETE FROM conversations WHERE expires <= ?').run(Date.now());
      this.db.exec('COMMIT');
    } catch (err) {
      this.rollback();
      throw err;
    }
  }
}
