// RedisStore: the Store shared by every gateway process, on one Redis or a Cluster: per-key and per-group updates are
// Lua scripts on one slot (keys.ts, lua/); records and rollups are written behind (batch.ts).
import { checkConversation, CONVERSATION_ID } from '../conversations.ts';
import { checkSignature, SIGNATURE_ID } from '../signatures.ts';
import { Redis, type Cluster } from 'ioredis';
import type {
  AccountLease, AccountState, AcquireAccountRequest, AcquireAccountResult, Admission, AdmitRefusal, AdmitRequest,
  AdmitResult, CooldownReason, IssuedKey, KeyLimits, KeyUsage, LeaseEnding, RecordFilter, RollupUnit, Store, UsageBucket,
  UsageRecord,
} from '../types.ts';
import type { KeyPatch } from '../issued-keys.ts';
import { scripts, type RedisClient } from '../lua/index.ts';
import { resolveOptions, type StoreOptions } from '../options.ts';
import { RedisAccounts } from './accounts.ts';
import { SettleBatch } from './batch.ts';
import { RedisIssuedKeys } from './issued.ts';
import { KeyLayout } from './keys.ts';
import { readKeyUsage, readRecords, readUsageBuckets } from './reads.ts';
import { recordCounters, recordTokens } from '../rollup.ts';
import { leaseLength } from '../rules/accounts.ts';
import { admissionOf } from '../rules/ledger.ts';
import { positive } from '../rules/limits.ts';
import { checkSettleArgs } from '../settle-args.ts';
import { DAY_MS, MINUTE_MS, ROLLUP_DAYS, SETTLE_MARKER_MS, holdNano, minuteOf, toNano } from '../units.ts';

export interface RedisStoreOptions extends StoreOptions {
  /** redis:// or rediss:// URL; ignored when `client` is given. */
  url?: string;
  /** A connection (or Cluster) to use instead of `url`; close() leaves it open unless `closeClient`. */
  client?: Redis | Cluster;
  /** close() also quits `client` (default: only a connection the store made itself). */
  closeClient?: boolean;
  /** Prepended to every key and to the pub/sub channel, e.g. "gw:". */
  prefix: string;
  /** With `url`: a command not answered within this fails (ioredis commandTimeout); none when unset. */
  commandTimeoutMs?: number;
  /** With `url`: the connection's errors (ioredis reconnects by itself; commands report their own failures). */
  onConnectionError?: (err: Error) => void;
  /** Writing a batch of settled records failed (it is tried again), or records were dropped; `waiting` are still unsent. */
  onBatchError?: (err: Error, waiting: number) => void;
}

/** A released marker only matters while the admission minute's tpm bucket lives (3 minutes), with some margin. */
const RELEASED_TTL_MS = 300_000;

/** A key's terms as admit.lua takes them: one argument, the same text for all of its requests (read once a turn). */
const admitTerms = (l: KeyLimits, leaseMs: number): string =>
  `${leaseMs} ${toNano(l.quota_usd)} ${toNano(l.usd_5h)} ${toNano(l.usd_1d)} ${toNano(l.usd_7d)} ${positive(l.concurrency)} ${positive(l.rpm)} ${positive(l.tpm)}`;

/** The cost an admission holds, as settle.lua and release.lua take it: "<admission minute> <nano>", '' for none. */
const heldArg = (a: Admission | undefined): string => {
  const nano = holdNano(a?.estimatedCost);
  return nano > 0 ? `${a!.minute} ${nano}` : '';
};

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly layout: KeyLayout;
  private readonly client: RedisClient;
  private readonly owned: boolean;
  private readonly opts: ReturnType<typeof resolveOptions>;
  private readonly issued: RedisIssuedKeys;
  private readonly accounts: RedisAccounts;
  private readonly batch: SettleBatch;
  private readonly onBatchError: (err: Error, waiting: number) => void;
  /** A minute's marker hash lives this long: a settled marker at most the retention, a released one RELEASED_TTL_MS. */
  private readonly markerMs: number;
  /** settle.lua's "<marker ttl> <acct ttl>": one argument, the same text for every settlement. */
  private readonly settleTtls: string;

  constructor(options: RedisStoreOptions) {
    this.opts = resolveOptions(options);
    this.layout = new KeyLayout(options.prefix);
    this.owned = options.closeClient ?? !options.client;
    if (options.client) this.client = options.client;
    else {
      const client = new Redis(options.url || 'redis://127.0.0.1:6379', {
        enableAutoPipelining: true, ...(options.commandTimeoutMs ? { commandTimeout: options.commandTimeoutMs } : {}),
      });
      client.on('error', options.onConnectionError ?? (() => {}));
      this.client = client;
    }
    this.issued = new RedisIssuedKeys(this.client, this.layout);
    this.accounts = new RedisAccounts(this.client, this.layout);
    this.onBatchError = options.onBatchError ?? (() => {});
    this.markerMs = Math.max(RELEASED_TTL_MS, Math.min(this.opts.retentionMs, SETTLE_MARKER_MS));
    this.settleTtls = `${this.markerMs} ${ROLLUP_DAYS * DAY_MS}`;
    this.batch = new SettleBatch(this.client, this.layout, { ...this.opts, markerMs: this.markerMs }, this.onBatchError);
  }

  putKey(key: IssuedKey): Promise<void> { return this.issued.put(key); }
  getKey(sha256: string): Promise<IssuedKey | undefined> { return this.issued.get(sha256); }
  listKeys(): Promise<IssuedKey[]> { return this.issued.list(); }
  updateKey(id: string, patch: KeyPatch): Promise<boolean> { return this.issued.update(id, patch); }
  deleteKey(id: string): Promise<boolean> { return this.issued.delete(id); }
  onKeysChanged(listener: () => void): Promise<void> { return this.issued.onChanged(listener); }

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    const k = this.layout.key(req.keyId);
    const l = req.limits;
    const a = admissionOf(req, true);
    const r = (await scripts.admit.run(this.client, [k.lease, k.rpm, k.tpm(a.minute), k.acct, k.held], [
      Math.floor(req.now), req.requestId, a.estimatedTokens, admitTerms(l, leaseLength(req.leaseMs)), holdNano(req.estimatedCost),
    ])) as number | [0, AdmitRefusal, number, string, number?];
    // admit.lua: 1 admitted with a lease, 2 without one, or a refusal.
    if (typeof r === 'number') {
      a.lease = r === 1;
      return { ok: true, admission: a };
    }
    const [, reason, retry, window, held] = r;
    return {
      ok: false, reason,
      ...(retry >= 0 ? { retryAfterMs: retry } : {}),
      ...(window ? { window: window as '5h' | '1d' | '7d' } : {}),
      ...(held === 1 ? { held: true as const } : {}),
    };
  }

  async heartbeat(admission: Admission, leaseMs: number, now: number): Promise<void> {
    if (!admission.lease) return;
    await scripts.heartbeat.run(this.client, [this.layout.key(admission.keyId).lease],
      [Math.floor(now), admission.requestId, leaseLength(leaseMs)]);
  }

  async release(admission: Admission): Promise<void> {
    const k = this.layout.key(admission.keyId);
    await scripts.release.run(this.client, [k.lease, k.tpm(admission.minute), k.markers(admission.minute), k.held],
      [admission.requestId, admission.lease ? admission.requestId : '', admission.estimatedTokens, this.markerMs, heldArg(admission)]);
  }

  async settle(record: UsageRecord, admission: Admission | undefined, _limits: KeyLimits): Promise<{ recorded: boolean }> {
    checkSettleArgs(record, admission);
    const k = this.layout.key(record.key_id);
    const time = Math.floor(record.time);
    const minute = admission?.minute ?? minuteOf(time);
    const args: (string | number)[] = [
      record.request_id, admission?.lease ? (admission.requestId === record.request_id ? '1' : `=${admission.requestId}`) : '',
      admission ? String(recordTokens(record) - admission.estimatedTokens) : '',
      time, admission?.estimatedTokens ?? 0, String(recordCounters(record).cost), this.settleTtls, heldArg(admission),
    ];
    // A record older than a marker lives (a settlement held through an outage): a repeat is looked for in the log.
    if (Date.now() - time > this.markerMs - MINUTE_MS) args.push(JSON.stringify(record.request_id));
    const recorded = Number(await scripts.settle.run(this.client, [k.markers(minute), k.lease, k.tpm(minute), k.acct, k.log, k.logIndex, k.held], args));
    // 2: settled before, record not known kept (the first answer may have been lost): the batch writes it unless
    // log-key.lua finds it kept.
    if (recorded !== 0) this.batch.add(record, JSON.stringify(record), minute, recorded === 2);
    return { recorded: recorded === 1 };
  }

  /** Writes the settled records and rollups still waiting in this process (batch.ts); reads do it first. */
  flush(): Promise<void> { return this.batch.flush(); }

  // Reads see this process's own settlements: what waits in the batch is written first. Another process's may lag
  // by up to BATCH_MS.
  async keyUsage(keyId: string, opts: { days: number; from?: string; to?: string; now: number; timezone?: string }): Promise<KeyUsage> {
    await this.batch.flush();
    return readKeyUsage(this.client, this.layout, keyId, opts);
  }

  async records(filter: RecordFilter): Promise<{ records: UsageRecord[]; cursor?: string }> {
    await this.batch.flush();
    return readRecords(this.client, this.layout, filter, this.opts);
  }

  async usageBuckets(unit: RollupUnit, from: number, to: number): Promise<UsageBucket[]> {
    await this.batch.flush();
    return readUsageBuckets(this.client, this.layout, unit, from, to);
  }

  acquireAccount(req: AcquireAccountRequest): Promise<AcquireAccountResult> { return this.accounts.acquire(req); }
  heartbeatAccount(lease: AccountLease, leaseMs: number, now: number): Promise<void> {
    return this.accounts.heartbeat(lease, leaseMs, now);
  }
  releaseAccount(lease: AccountLease, ending?: LeaseEnding): Promise<void> { return this.accounts.release(lease, ending); }
  cooldown(group: string, account: string, until: number, reason: CooldownReason): Promise<void> {
    return this.accounts.cooldown(group, account, until, reason);
  }
  accountStates(group: string, accounts: string[], now: number): Promise<AccountState[]> {
    return this.accounts.states(group, accounts, now);
  }
  bind(group: string, kind: 'sticky' | 'pin', name: string, account: string, ttlMs: number): Promise<void> {
    return this.accounts.bind(group, kind, name, account, ttlMs);
  }
  bound(group: string, kind: 'sticky' | 'pin', name: string): Promise<string | undefined> {
    return this.accounts.bound(group, kind, name);
  }

  async putConversation(keyId: string, responseId: string, value: string, ttlMs: number): Promise<void> {
    checkConversation(responseId, value);
    await this.client.set(this.layout.key(keyId).conversation(responseId), value, 'PX', Math.max(1, Math.round(ttlMs)));
  }
  async getConversation(keyId: string, responseId: string): Promise<string | undefined> {
    if (!CONVERSATION_ID.test(responseId)) return undefined;
    return (await this.client.get(this.layout.key(keyId).conversation(responseId))) ?? undefined;
  }

  async putSignature(keyId: string, name: string, value: string, ttlMs: number): Promise<void> {
    checkSignature(name, value);
    await this.client.set(this.layout.key(keyId).signature(name), value, 'PX', Math.max(1, Math.round(ttlMs)));
  }
  async getSignatures(keyId: string, names: string[]): Promise<(string | undefined)[]> {
    const valid = names.filter((name) => SIGNATURE_ID.test(name));
    if (valid.length === 0) return names.map(() => undefined);
    // Every name carries the key's hash tag: one MGET on one slot.
    const keys = this.layout.key(keyId);
    const found = await this.client.mget(...valid.map((name) => keys.signature(name)));
    const byName = new Map(valid.map((name, i) => [name, found[i] ?? undefined]));
    return names.map((name) => byName.get(name));
  }

  async claim(name: string, ttlMs: number): Promise<boolean> {
    return (await this.client.set(this.layout.global.claim(name), '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK';
  }

  async noteDelivery(text: string, keep: number): Promise<void> {
    const key = this.layout.global.deliveries;
    // A text noted again (its first call may have landed after it timed out) replaces itself. Kept as long as usage
    // records are, from the latest delivery: like every key but issued keys, it expires.
    await this.client.multi().lrem(key, 0, text).lpush(key, text).ltrim(key, 0, Math.max(1, keep) - 1).pexpire(key, this.opts.retentionMs).exec();
  }

  async recentDeliveries(limit: number): Promise<string[]> {
    return limit > 0 ? this.client.lrange(this.layout.global.deliveries, 0, limit - 1) : [];
  }

  async close(): Promise<void> {
    await this.batch.close().catch((err: Error) => this.onBatchError(err, this.batch.size));
    await this.issued.close();
    if (this.owned) await this.client.quit().catch(() => this.client.disconnect());
  }
}
