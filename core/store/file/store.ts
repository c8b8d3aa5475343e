// FileStore: the MemoryStore kept in a local SQLite file, written behind by a thread (writer.ts) once a second and
// loaded at start. Record texts are not kept in memory: bytes until written (record-bytes.ts), then read from the file.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Logger } from 'pino';
import type {
  AccountLease, AcquireAccountRequest, AcquireAccountResult, Admission, AdmitRequest, AdmitResult, CooldownReason, IssuedKey,
  LeaseEnding, UsageRecord,
} from '../types.ts';
import type { KeyPatch } from '../issued-keys.ts';
import { MemoryStore } from '../memory/store.ts';
import type { Settlement } from '../rules/ledger.ts';
import { Journal, type MemoryState } from './journal.ts';
import { loadFile } from './load.ts';
import { restore } from './restore.ts';
import type { FromWriter, WriterOptions } from './rows.ts';
import { release } from '../memory/columns.ts';
import { readRecords } from './record-bytes.ts';
import { connect, type WriterLink } from './thread.ts';
import type { RecordEntry } from '../memory/record-index.ts';
import { sqlite } from './sqlite.ts';
import type { StoreOptions } from '../options.ts';

/** Changes reach the file at most this long after they are made: what a kill -9 can lose. */
export const FLUSH_MS = 1000;
/** A batch goes sooner once its records reach this size, so what it holds is bounded whatever the request rate. */
export const FLUSH_BYTES = 512 * 1024;

type Answer = Extract<FromWriter, { type: 'ready' | 'open-failed' | 'closed' | 'stopped' }>;

export class FileStore extends MemoryStore {
  override readonly kind = 'file';
  readonly path: string;
  /** What was loaded at start (the start-up log line tells it). */
  loaded = { keys: 0, records: 0 };
  private readonly log: Logger;
  private readonly link: WriterLink;
  private readonly journal = new Journal();
  private readonly state: MemoryState;
  private readonly acks = new Map<number, () => void>();
  /** The records of each batch sent and not yet written (their texts for a page until then), by batch. */
  private readonly unwritten = new Map<number, Uint8Array>();
  private reader?: { db: DatabaseSync; text: StatementSync };
  private answer?: (m: Answer) => void;
  private timer?: NodeJS.Timeout;
  private seq = 0;
  private alive = true;
  private closing?: Promise<void>;
  private failureLoggedAt = -Infinity;
  private failedWrites = 0;
  /** A flush is queued for when the current settlement is over (FLUSH_BYTES). */
  private flushQueued = false;
  /** Set while the writer is stopped or failing (textsToEntries), and once the store is closed. */
  private entriesKeepTexts = false;

  /** Opens the file (creating it), loads what it holds, and writes changes behind from then on. */
  static async open(path: string, options: StoreOptions, log: Logger): Promise<FileStore> {
    const store = new FileStore(path, options, log);
    await store.load();
    return store;
  }

  private constructor(path: string, options: StoreOptions, log: Logger) {
    super(options);
    this.path = path;
    this.log = log;
    this.state = { keys: this.keys, ledgers: this.ledgers, accounts: this.accounts, conversations: this.conversations };
    this.link = connect((m) => this.heard(m));
  }

  private async load(): Promise<void> {
    const m = await this.ask({ type: 'open', options: { ...this.opts, path: this.path } });
    if (m.type !== 'ready') {
      this.alive = false;
      this.link.disconnect();
      throw new Error(`store.path ${this.path}: ${m.type === 'closed' ? 'closed' : m.message}`);
    }
    let state: ReturnType<typeof loadFile>;
    try {
      state = loadFile(this.path);
      const db = new (sqlite().DatabaseSync)(this.path, { readOnly: true });
      this.reader = { db, text: db.prepare('SELECT json FROM records WHERE key_id = ? AND time = ? AND request_id = ?') };
    } catch (err) {
      await this.close();
      throw new Error(`store.path ${this.path}: ${(err as Error).message}`);
    }
    restore({ ...this.state, ledger: (key) => this.ledger(key), global: this.global, summary: this.summary, opts: this.opts }, state);
    this.loaded = { keys: state.keys.length, records: state.records.length };
    this.timer = setInterval(() => void this.flush(), FLUSH_MS).unref();
  }

  /** Writes what changed since the last batch; resolves once it is committed (or its write failed, logged). */
  flush(): Promise<void> {
    // With the writer gone (logged) the changes have nowhere to go: they are dropped, not piled up in memory.
    if (!this.alive) this.journal.clear();
    if (this.journal.empty) return Promise.resolve();
    const batch = this.journal.take(this.state, ++this.seq);
    if (batch.records.length && !this.entriesKeepTexts) this.unwritten.set(batch.seq, batch.records);
    return new Promise((resolve) => {
      this.acks.set(batch.seq, resolve);
      this.link.wait();
      this.link.post({ type: 'batch', batch });
    });
  }

  /** Sends a message that has one answer (open, close). */
  private ask(m: { type: 'open'; options: WriterOptions } | { type: 'close' }): Promise<Answer> {
    return new Promise((resolve) => {
      this.answer = resolve;
      this.link.wait();
      this.link.post(m);
    });
  }

  private heard(m: FromWriter): void {
    if (m.type === 'written') {
      const bytes = this.unwritten.get(m.seq);
      if (bytes) release(bytes);
      this.unwritten.delete(m.seq);
      // Written again after a failure (batches are written in order): texts go back to waiting as bytes.
      if (this.alive) this.entriesKeepTexts = false;
      return this.ack(m.seq);
    }
    if (m.type === 'write-failed') {
      this.failedWrites++;
      // Batches will pile up until the file takes writes again: their texts are not left to be searched for as bytes.
      this.textsToEntries();
      const now = Date.now();
      if (now - this.failureLoggedAt >= 10_000) {
        this.failureLoggedAt = now;
        this.log.error({ error: m.message, path: this.path }, 'store: writing to the file failed; trying again every second (the data is still served from memory)');
      }
      return this.ack(m.seq);
    }
    if (m.type === 'stopped') {
      if (this.alive && this.timer) this.log.error({ error: m.message, path: this.path }, 'store: the file writer stopped; changes are no longer written');
      this.alive = false;
      // What was not written stays in memory, texts included.
      this.textsToEntries();
      for (const seq of [...this.acks.keys()]) this.ack(seq);
    }
    const answer = this.answer;
    this.answer = undefined;
    if (!answer) return;
    this.link.done();
    answer(m);
  }

  /** The records not written yet, oldest first: the batches sent, then what the journal holds. */
  private *pending() {
    for (const bytes of this.unwritten.values()) yield* readRecords(bytes);
    yield* readRecords(this.journal.records.view());
  }

  /** The writer is gone or failing: the records not written keep their texts in memory, as new ones do until it writes. */
  private textsToEntries(): void {
    this.entriesKeepTexts = true;
    for (const row of this.pending()) {
      this.ledgers.get(row.key)?.records.keepText(row.time, row.id, row.json);
      this.global.keepText(row.time, row.id, row.json);
    }
    this.unwritten.clear();
  }

  /** Batches the file did not take (each try counts): gateway_store_write_failures_total. */
  writeFailures(): number {
    return this.failedWrites;
  }

  /** While the writer writes, texts are in the file or on their way there. */
  protected override keepsTexts(): boolean {
    return this.entriesKeepTexts;
  }

  /** Texts of kept records: from the file, or from the bytes not written yet; one pruned from the file is left out. */
  protected override recordText(entries: RecordEntry[]): Map<string, string> {
    const texts = new Map<string, string>();
    if (!this.reader) return texts;
    try {
      for (const e of entries) {
        const row = this.reader.text.get(e.key, e.score, e.id) as { json: string } | undefined;
        if (row) texts.set(e.id, row.json);
      }
    } catch (err) {
      this.log.error({ error: (err as Error).message, path: this.path }, 'store: reading records from the file failed');
    }
    if (texts.size < entries.length) {
      const missing = new Set(entries.filter((e) => !texts.has(e.id)).map((e) => e.id));
      for (const row of this.pending()) if (missing.has(row.id)) texts.set(row.id, row.json);
    }
    return texts;
  }

  private ack(seq: number): void {
    const resolve = this.acks.get(seq);
    if (!resolve) return;
    this.acks.delete(seq);
    this.link.done();
    resolve();
  }

  override async putKey(key: IssuedKey): Promise<void> {
    await super.putKey(key);
    this.journal.key(key.id);
    // A key change is written before it is answered: the plaintext of an issued key is shown only once.
    await this.flush();
  }

  override async updateKey(id: string, patch: KeyPatch): Promise<boolean> {
    const changed = await super.updateKey(id, patch);
    if (changed) this.journal.key(id);
    await this.flush();
    return changed;
  }

  override async deleteKey(id: string): Promise<boolean> {
    const deleted = await super.deleteKey(id);
    if (deleted) this.journal.key(id);
    await this.flush();
    return deleted;
  }

  override async admit(req: AdmitRequest): Promise<AdmitResult> {
    const r = await super.admit(req);
    if (r.ok) this.journal.admitted(req.keyId, req.requestId, req.now, r.admission.estimatedTokens > 0 ? r.admission.minute : undefined);
    return r;
  }

  override async release(admission: Admission): Promise<void> {
    await super.release(admission);
    if (admission.estimatedTokens > 0) this.journal.minute(admission.keyId, admission.minute);
  }

  protected override recorded(record: UsageRecord, json: string, admission: Admission | undefined, s: Settlement): void {
    this.journal.settled(record, s, json, admission?.minute);
    // After the settlement, not inside it: a batch reads the state its marks name.
    if (this.journal.records.size >= FLUSH_BYTES && !this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => {
        this.flushQueued = false;
        void this.flush();
      });
    }
  }

  override async acquireAccount(req: AcquireAccountRequest): Promise<AcquireAccountResult> {
    const r = await super.acquireAccount(req);
    if (r.ok) this.journal.account(req.group, r.lease.account);
    return r;
  }

  override async releaseAccount(lease: AccountLease, ending?: LeaseEnding): Promise<void> {
    await super.releaseAccount(lease, ending);
    if (ending?.succeededAt !== undefined) this.journal.account(lease.group, lease.account);
    for (const b of ending?.bind ?? []) this.journal.binding(lease.group, b.kind, b.name);
  }

  override async cooldown(group: string, account: string, until: number, reason: CooldownReason): Promise<void> {
    await super.cooldown(group, account, until, reason);
    this.journal.account(group, account);
  }

  override async bind(group: string, kind: 'sticky' | 'pin', name: string, account: string, ttlMs: number): Promise<void> {
    await super.bind(group, kind, name, account, ttlMs);
    this.journal.binding(group, kind, name);
  }

  override async putConversation(keyId: string, responseId: string, value: string, ttlMs: number): Promise<void> {
    await super.putConversation(keyId, responseId, value, ttlMs);
    this.journal.conversation(keyId, responseId);
  }

  /** Writes the last batch and closes the file (leases are not kept: nothing is in flight after a restart). */
  override close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.timer);
      await this.flush();
      if (this.alive) {
        const m = await this.ask({ type: 'close' });
        if (m.type === 'closed' && m.unwritten > 0) this.log.error({ path: this.path, batches: m.unwritten }, 'store: closed with changes not written to the file');
      }
      this.alive = false;
      // Nothing is written from now on: a record settled after the close keeps its text on its entry.
      this.entriesKeepTexts = true;
      this.link.disconnect();
      this.reader?.db.close();
      this.reader = undefined;
      await super.close();
    })();
    return this.closing;
  }
}
