// MemoryStore: the embedded single-process Store (no Redis). No timers: everything expires lazily on use.
// FileStore (file/store.ts) extends it and keeps its state in a file; the protected fields are what it persists.
import type {
  AccountLease, AccountState, AcquireAccountRequest, AcquireAccountResult, Admission, AdmitRequest, AdmitResult,
  CooldownReason, IssuedKey, KeyLimits, LeaseEnding, KeyUsage, RecordFilter, RollupUnit, Store, UsageBucket, UsageRecord,
} from '../types.ts';
import { AccountBook } from './accounts.ts';
import { ConversationBook } from './conversations.ts';
import { checkSignature, SIGNATURES_KEPT } from '../signatures.ts';
import { NoticeBook } from './notices.ts';
import { cloneKey, patchKey, sortKeys, type KeyPatch } from '../issued-keys.ts';
import { KeyLedger } from './ledger.ts';
import { MemoryRecordIndex, recordEntry, type RecordEntry, type RecordText } from './record-index.ts';
import { resolveOptions, type StoreOptions } from '../options.ts';
import { pageRecords } from '../paging.ts';
import { emptyCounters } from '../rollup.ts';
import { rateFromSeconds } from '../rate.ts';
import { usagePlan, type UsageQuery } from '../usage-plan.ts';
import { buildKeyUsage } from '../usage-view.ts';
import { checkSettleArgs } from '../settle-args.ts';
import { admissionOf, settlementOf, type Settlement } from '../rules/ledger.ts';
import { positive } from '../rules/limits.ts';
import { MemorySummary } from '../summary.ts';

export class MemoryStore implements Store {
  readonly kind: Store['kind'] = 'memory';
  protected readonly opts: ReturnType<typeof resolveOptions>;
  protected readonly keys = new Map<string, IssuedKey>(); // sha256 -> key
  private listeners = new Set<() => void>();
  protected readonly ledgers = new Map<string, KeyLedger>();
  private readonly text: RecordText = (entries) => this.recordText(entries);
  protected readonly global = new MemoryRecordIndex(this.text);
  protected readonly summary = new MemorySummary();
  protected readonly accounts = new AccountBook();
  protected readonly conversations = new ConversationBook();
  // Not journaled by the file store: a signature lost with a restart costs a placeholder, not a conversation.
  private readonly signatures = new ConversationBook(SIGNATURES_KEPT, checkSignature);
  private readonly notices = new NoticeBook();

  constructor(options: StoreOptions = {}) {
    this.opts = resolveOptions(options);
  }

  protected ledger(keyId: string): KeyLedger {
    let l = this.ledgers.get(keyId);
    if (!l) this.ledgers.set(keyId, (l = new KeyLedger(this.text)));
    return l;
  }

  private changed(): void {
    // Asynchronous like Redis pub/sub, so a listener never runs inside the caller's update.
    for (const fn of this.listeners) queueMicrotask(fn);
  }

  async putKey(key: IssuedKey): Promise<void> {
    for (const [sha, k] of this.keys) if (k.id === key.id && sha !== key.sha256) this.keys.delete(sha);
    this.keys.set(key.sha256, cloneKey(key));
    this.changed();
  }

  async getKey(sha256: string): Promise<IssuedKey | undefined> {
    const k = this.keys.get(sha256);
    return k && cloneKey(k);
  }

  async listKeys(): Promise<IssuedKey[]> {
    return sortKeys([...this.keys.values()].map(cloneKey));
  }

  async updateKey(id: string, patch: KeyPatch): Promise<boolean> {
    for (const [sha, k] of this.keys) {
      if (k.id !== id) continue;
      this.keys.set(sha, cloneKey(patchKey(k, patch)));
      this.changed();
      return true;
    }
    return false;
  }

  async deleteKey(id: string): Promise<boolean> {
    for (const [sha, k] of this.keys) {
      if (k.id !== id) continue;
      this.keys.delete(sha);
      this.changed();
      return true;
    }
    return false;
  }

  onKeysChanged(listener: () => void): void {
    this.listeners.add(listener);
  }

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    const l = this.ledger(req.keyId);
    const refusal = l.check(req);
    if (refusal) return refusal;
    const admission = admissionOf(req, positive(req.limits.concurrency) > 0);
    l.reserve(req, admission);
    return { ok: true, admission };
  }

  async heartbeat(admission: Admission, leaseMs: number, now: number): Promise<void> {
    if (admission.lease) this.ledgers.get(admission.keyId)?.heartbeat(admission.requestId, leaseMs, now);
  }

  async release(admission: Admission): Promise<void> {
    this.ledgers.get(admission.keyId)?.release(admission);
  }

  async settle(record: UsageRecord, admission: Admission | undefined, _limits: KeyLimits): Promise<{ recorded: boolean }> {
    checkSettleArgs(record, admission);
    const l = this.ledger(record.key_id);
    const s = settlementOf(record);
    if (l.settled(record.request_id, s.clock)) return { recorded: false };
    const json = JSON.stringify(record);
    const entry = recordEntry(record, this.keepsTexts() ? json : undefined); // added to both indexes
    l.settle(record, s, admission, this.opts, entry);
    this.global.add(entry, this.opts.recordsTotal, s.clock - this.opts.retentionMs);
    this.summary.add(record);
    this.recorded(record, json, admission, s);
    return { recorded: true };
  }

  /** Whether a record's entry holds its text: here always (the file store keeps texts elsewhere while it can write). */
  protected keepsTexts(): boolean {
    return true;
  }

  /** After each settlement that was recorded, with the record's JSON text (the file store writes it). */
  protected recorded(_record: UsageRecord, _json: string, _admission: Admission | undefined, _s: Settlement): void {}

  /** The texts of kept records whose entries let theirs go: none here (this store keeps every text). */
  protected recordText(_entries: RecordEntry[]): Map<string, string> {
    return new Map();
  }

  async keyUsage(keyId: string, opts: UsageQuery): Promise<KeyUsage> {
    const l = this.ledgers.get(keyId);
    const plan = usagePlan(opts);
    return buildKeyUsage(plan, {
      total: l?.total ?? emptyCounters(),
      days: plan.days.map((d) => ({ total: l?.days.get(d.date), hours: d.hours ? l?.hours.get(d.date) : undefined })),
      modelDays: plan.modelDays.map((d) => ({
        models: l?.dayModels.get(d.date) ?? new Map(), hours: d.hours ? l?.hourModels.get(d.date) : undefined,
      })),
      windows: l?.windows ?? {},
      duration: l?.duration ?? { ms: 0, requests: 0 },
      lastMinute: rateFromSeconds(l?.perSecond, opts.now),
    }, opts.now);
  }

  async records(filter: RecordFilter): Promise<{ records: UsageRecord[]; cursor?: string }> {
    if (filter.key === undefined) return pageRecords(this.global, filter);
    const l = this.ledgers.get(filter.key);
    return l ? pageRecords(l.records, filter) : { records: [] };
  }

  async usageBuckets(unit: RollupUnit, from: number, to: number): Promise<UsageBucket[]> {
    return this.summary.read(unit, from, to);
  }

  async acquireAccount(req: AcquireAccountRequest): Promise<AcquireAccountResult> {
    return this.accounts.acquire(req, Math.random());
  }

  async heartbeatAccount(lease: AccountLease, leaseMs: number, now: number): Promise<void> {
    this.accounts.heartbeat(lease, leaseMs, now);
  }

  async releaseAccount(lease: AccountLease, ending?: LeaseEnding): Promise<void> {
    this.accounts.release(lease, ending);
  }

  async cooldown(group: string, account: string, until: number, reason: CooldownReason): Promise<void> {
    this.accounts.cooldown(group, account, until, reason);
  }

  async accountStates(group: string, accounts: string[], now: number): Promise<AccountState[]> {
    return this.accounts.states(group, accounts, now);
  }

  async bind(group: string, kind: 'sticky' | 'pin', name: string, account: string, ttlMs: number): Promise<void> {
    this.accounts.bind(group, kind, name, account, ttlMs);
  }

  async bound(group: string, kind: 'sticky' | 'pin', name: string): Promise<string | undefined> {
    return this.accounts.bound(group, kind, name);
  }

  async putConversation(keyId: string, responseId: string, value: string, ttlMs: number): Promise<void> {
    this.conversations.put(keyId, responseId, value, ttlMs);
  }

  async getConversation(keyId: string, responseId: string): Promise<string | undefined> {
    return this.conversations.get(keyId, responseId);
  }

  async putSignature(keyId: string, name: string, value: string, ttlMs: number): Promise<void> {
    this.signatures.put(keyId, name, value, ttlMs);
  }

  async getSignatures(keyId: string, names: string[]): Promise<(string | undefined)[]> {
    return names.map((name) => this.signatures.get(keyId, name));
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    return this.notices.claim(name, ttlMs);
  }

  async noteDelivery(text: string, keep: number): Promise<void> {
    this.notices.note(text, keep);
  }

  async recentDeliveries(limit: number): Promise<string[]> {
    return this.notices.recent(limit);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
