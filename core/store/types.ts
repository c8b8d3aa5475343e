// The Store contract: what gateway processes share (issued keys, limits, leases, the usage ledger). The memory, file and
// Redis (or Redis Cluster) stores implement it and pass one contract suite.
import type { Outcome } from '../shapes.ts';

/** A key issued at runtime (its plaintext is shown once and never stored). */
export interface IssuedKey {
  id: string;
  sha256: string;
  group: string;
  pools: string[];
  models?: string[];
  limits: KeyLimits;
  expires_at?: number;
  disabled: boolean;
  created_at: number;
  name?: string;
}

/** Per-key limits (gateway.yaml keys[].limits or an issued key's limits). USD amounts are after rate multipliers. */
export interface KeyLimits {
  rpm?: number;
  tpm?: number;
  concurrency?: number;
  quota_usd?: number;
  usd_5h?: number;
  usd_1d?: number;
  usd_7d?: number;
}

export interface AdmitRequest {
  keyId: string;
  requestId: string;
  now: number;
  limits: KeyLimits;
  /** Tokens reserved against tpm until settlement reconciles them with the actual count. */
  estimatedTokens: number;
  /** USD held against quota_usd and the windows until the request settles or is released (counted as spent meanwhile). */
  estimatedCost?: number;
  /** A concurrency lease lives this long unless renewed by heartbeat (a crashed process frees it by itself). */
  leaseMs: number;
}

export type AdmitRefusal =
  | 'quota_exhausted' | 'window_exhausted' | 'rpm' | 'tpm' | 'concurrency';

export type AdmitResult =
  | { ok: true; /** Opaque token to hand back at settle (what was reserved and where). */ admission: Admission }
  | {
    ok: false; reason: AdmitRefusal;
    /** ms until waiting can help (concurrency: at most 1 s, leases are usually freed by settle); undefined when it cannot (quota; a tpm estimate larger than the whole tpm). */
    retryAfterMs?: number;
    window?: '5h' | '1d' | '7d';
    /** A USD limit reached only with what requests in flight hold (retryAfterMs: HELD_RETRY_MS). */
    held?: true;
  };

/** `estimatedCost`: the USD held (see AdmitRequest), 0 for none. */
export interface Admission { keyId: string; requestId: string; minute: number; estimatedTokens: number; estimatedCost: number; lease: boolean }

/** How a metered request ended: the request's outcome. */
export type Ending = Outcome;

/** One metered request. Input tokens exclude cache reads and writes, which have their own fields. */
export interface UsageRecord {
  /** The gateway's own request id (random, per request): the record's identity. */
  request_id: string;
  /** The id the client gave its request (x-request-id or x-client-request-id), when well formed: for its own tracing only. */
  client_request_id?: string;
  /** ms since epoch. The store's clock for this record: its UTC day in rollups, window starts, retention. */
  time: number;
  key_id: string;
  group: string;
  platform: string;
  account: string;
  route: string;
  model: string;
  upstream_model: string;
  stream: boolean;
  status: number;
  ending: Ending;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** Of cache_write_tokens, those cached for an hour (priced at cache_write_1h); absent when none. */
  cache_write_1h_tokens?: number;
  reasoning_tokens: number;
  /** USD after the group's rate multiplier; the operator's upstream cost is never shown to key holders. */
  cost: number;
  duration_ms: number;
  ttft_ms: number | null;
  /** output or input tokens are the gateway's estimate (a stream left before its usage came: on_disconnect observed). */
  estimated?: boolean;
  /** Failed attempts (and the last one); `group` names the group of one made before a fallback (fell_back_from). */
  attempts?: { account: string; status: number; reason: string; group?: string }[];
  /** The groups that could not serve it, first first, before `group` did (groups.NAME.fallback). */
  fell_back_from?: string[];
  /** 'other': per-model rollups count it under `other` (an unknown name refused upstream, or past MODEL_ROWS of them). */
  rollup_model?: 'other';
}

export interface UsageTotals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost: number;
}

export interface WindowState { window: '5h' | '1d' | '7d'; used: number; start: number | null }

export interface KeyUsage {
  total: UsageTotals;
  /** The usage day holding `now`: its local date in the asked time zone (see zone-days.ts for :30 and :45 zones). */
  today: string;
  /** Per usage day (local date in the asked time zone, UTC by default), newest last, only days with traffic. */
  days: (UsageTotals & { date: string })[];
  /** Per model over the usage days from..to. */
  models: (UsageTotals & { model: string })[];
  windows: WindowState[];
  /** Mean duration of the requests in `total` (those recorded with one; 0 when none), to 0.01 ms. */
  averageDurationMs: number;
  /** Requests and tokens (input, output, cache read and write) settled in the 60 whole seconds up to `now`'s, included. */
  lastMinute: { requests: number; tokens: number };
}

export interface RecordFilter {
  key?: string; group?: string; model?: string;
  /** HTTP status between min and max, both included (one status: min = max; a class such as 4xx: 400..499). */
  status?: { min: number; max: number };
  ending?: Ending;
  from?: number; to?: number; limit: number; cursor?: string;
}

/** The bucket sizes of the gateway-wide rollups (summary.ts): a minute, an hour, a UTC day. */
export type RollupUnit = 'minute' | 'hour' | 'day';

/** What one bucket of time holds, across every key: usage by key, group and model, failed upstream attempts by account. */
export interface UsageBucket {
  /** Start of the bucket (ms since epoch, a multiple of the unit). */
  start: number;
  /** Errors: records with a status of 400 or more, or that ended failed, missing-terminal or timeout. Cost in USD. */
  usage: { key: string; group: string; model: string; requests: number; errors: number; tokens: number; cost: number }[];
  /** Upstream attempts that failed (any reason but ok and client_error), and how many of them moved to another account. */
  attempts: { group: string; account: string; reason: string; failures: number; failovers: number }[];
}

/**
 * An upstream account as the scheduler sees it. Concurrency below 1 counts as 1; weight is a share among accounts of
 * equal priority and load (rules/accounts.ts); weight 0 is chosen only when no such account has a positive one.
 */
export interface AccountCandidate { id: string; priority: number; weight: number; concurrency: number }

export interface AcquireAccountRequest {
  group: string;
  requestId: string;
  now: number;
  /** Accounts that may serve this request (enabled, serving the model), minus those already tried. */
  candidates: AccountCandidate[];
  /** Try this account first (a sticky binding or a response pin) when it is schedulable and has a free slot. */
  prefer?: string;
  /** With prefer: refuse rather than fall back to another account (a pinned conversation lives on one account). */
  only?: boolean;
  /**
   * Without prefer: the account bound to the first of these with a binding is preferred (a pin also `only`; a pin to a
   * non-candidate refuses with `none`), looked up in the same decision; the binding found comes back in the result.
   */
  bound?: { kind: 'sticky' | 'pin'; name: string }[];
  leaseMs: number;
}

export interface AccountLease { group: string; account: string; requestId: string }

/** The binding an acquisition found for `bound`, and the account it is bound to. */
export interface FoundBinding { kind: 'sticky' | 'pin'; name: string; account: string }

export type AcquireAccountResult =
  | { ok: true; lease: AccountLease; /** the preferred account was taken */ preferred: boolean; bound?: FoundBinding }
  | {
    ok: false;
    /** busy: every schedulable account is at its concurrency; cooling: every candidate is cooling down; none: no candidates. */
    reason: 'busy' | 'cooling' | 'none';
    /** cooling: ms until the soonest cool-down ends. */
    retryAfterMs?: number;
    bound?: FoundBinding;
  };

/** What the end of an attempt tells the store along with giving its slot back, all in the same call. */
export interface LeaseEnding {
  /** The exchange succeeded at this time: ends probing, unless the account is still cooling down then. */
  succeededAt?: number;
  /** Bind these names to the lease's account, restarting their TTL (a session, a response pin), as bind would. */
  bind?: { kind: 'sticky' | 'pin'; name: string; ttlMs: number }[];
}

export type CooldownReason = 'rate_limited' | 'overloaded' | 'auth' | 'upstream_error' | 'unreachable' | 'credential';

export interface AccountState {
  id: string;
  inFlight: number;
  /** Set while cooling down (at the `now` asked about). */
  coolingUntil?: number;
  reason?: CooldownReason;
  /** Cooled down before and not yet proven healthy: admitted one request at a time (half-open). */
  probing: boolean;
  lastUsed?: number;
}

export interface Store {
  readonly kind: 'memory' | 'file' | 'redis';

  // issued keys
  putKey(key: IssuedKey): Promise<void>;
  getKey(sha256: string): Promise<IssuedKey | undefined>;
  listKeys(): Promise<IssuedKey[]>;
  /** Apply a change (disable, limits) to the key with this id; false when there is none. */
  updateKey(id: string, patch: Partial<Pick<IssuedKey, 'disabled' | 'limits' | 'expires_at' | 'models' | 'name'>>): Promise<boolean>;
  deleteKey(id: string): Promise<boolean>;
  /**
   * Called in every process whenever an issued key changes, and after the change feed reconnects (reload). The promise
   * resolves once the listener is live across processes.
   */
  onKeysChanged(listener: () => void): void | Promise<void>;

  // limits: one round trip before the upstream call ...
  admit(req: AdmitRequest): Promise<AdmitResult>;
  heartbeat(admission: Admission, leaseMs: number, now: number): Promise<void>;
  /**
   * Give back what admit reserved (lease, tpm estimate, cost held) for a request that ends unsettled: once, a no-op
   * after settle; the rpm entry stays. A settle after a release still records, counting its actual tokens in full.
   */
  release(admission: Admission): Promise<void>;
  /**
   * ... and one after: release the lease and the cost held, reconcile tokens, record, roll up; once per request id.
   * Admission undefined: never admitted, still recorded. `held`: kept and written later (guard.ts).
   */
  settle(record: UsageRecord, admission: Admission | undefined, limits: KeyLimits): Promise<{ recorded: boolean; held?: boolean }>;
  /** Settlements held until the store answers again (a shared store behind guard.ts). */
  pendingSettlements?(): number;
  /** A shared store behind guard.ts: false from a call that failed until one succeeds (an embedded store has none). */
  available?(): boolean;
  /** The embedded store's file: how many times writing a batch to it failed (a full disk), retried every second. */
  writeFailures?(): number;

  // reads
  /** `timezone` (IANA, default UTC) sets the usage days of `days`, `from` and `to`; an unknown zone rejects with a RangeError. */
  keyUsage(keyId: string, opts: { days: number; from?: string; to?: string; now: number; timezone?: string }): Promise<KeyUsage>;
  records(filter: RecordFilter): Promise<{ records: UsageRecord[]; cursor?: string }>;
  /**
   * The gateway-wide rollup of every bucket of `unit` from `from`'s to `to`'s, oldest first, empty ones included (at
   * most MAX_BUCKETS, the newest; kept UNIT_KEEP_MS: summary.ts).
   */
  usageBuckets(unit: RollupUnit, from: number, to: number): Promise<UsageBucket[]>;

  // upstream accounts (per group; one script per decision, shared by every process)
  /**
   * Pick an account and take a slot: prefer → lowest priority number → lowest load → weight as a share → least recently
   * used, by weight among exact ties. A request id that holds a lease on a candidate gets it back (renewed).
   */
  acquireAccount(req: AcquireAccountRequest): Promise<AcquireAccountResult>;
  /** Renews a lease that is still held; an expired or released lease is not revived. */
  heartbeatAccount(lease: AccountLease, leaseMs: number, now: number): Promise<void>;
  /** Gives the slot back (idempotent), with what the attempt's ending tells (success, bindings) in the same round trip. */
  releaseAccount(lease: AccountLease, ending?: LeaseEnding): Promise<void>;
  /** Out of scheduling until `until` (a later one wins), then probed one request at a time until a success. */
  cooldown(group: string, account: string, until: number, reason: CooldownReason): Promise<void>;
  accountStates(group: string, accounts: string[], now: number): Promise<AccountState[]>;
  /**
   * A name (session hash, response id) bound to an account for ttlMs on the real clock; binding again replaces it,
   * ttlMs <= 0 removes it.
   */
  bind(group: string, kind: 'sticky' | 'pin', name: string, account: string, ttlMs: number): Promise<void>;
  bound(group: string, kind: 'sticky' | 'pin', name: string): Promise<string | undefined>;

  // conversations the gateway keeps for clients (a translated Responses answer, for previous_response_id)
  /** Keeps JSON text under (key id, answer id) for ttlMs (real clock); a bad id or a value over 16 MiB is a RangeError. */
  putConversation(keyId: string, responseId: string, value: string, ttlMs: number): Promise<void>;
  /** What is kept under (key id, answer id); undefined when unknown, expired or malformed. A key reads only its own. */
  getConversation(keyId: string, responseId: string): Promise<string | undefined>;

  // tool-call signatures the gateway keeps for clients that cannot return them (chat), by a name the bridge derives
  /** Keeps `value` under (key id, name) for ttlMs (real clock); a bad name or a value over 64 KiB is a RangeError. */
  putSignature(keyId: string, name: string, value: string, ttlMs: number): Promise<void>;
  /** The values kept under each name, in order (undefined: unknown, expired or malformed). A key reads only its own. */
  getSignatures(keyId: string, names: string[]): Promise<(string | undefined)[]>;

  // the notifier's (core/notify): an event sent once across processes, and the latest deliveries for the console
  /**
   * True for the first claim of `name` while it lasts (ttlMs, on the real clock), false while another holds it: one
   * process of those sharing the store wins (Redis SET NX PX). The embedded store has one process.
   */
  claim(name: string, ttlMs: number): Promise<boolean>;
  /** Keeps an opaque JSON text at the head of the delivery list (once: noted again, it moves), the newest `keep` only. */
  noteDelivery(text: string, keep: number): Promise<void>;
  /** The newest `limit` texts noted, newest first. */
  recentDeliveries(limit: number): Promise<string[]>;

  close(): Promise<void>;
}
