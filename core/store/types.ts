// The Store contract: everything shared between gateway processes (issued keys, limits, leases, the usage ledger).
// MemoryStore (embedded, one process) and RedisStore (Redis or Redis Cluster) implement it and pass one contract suite.

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
  /** A concurrency lease lives this long unless renewed by heartbeat (a crashed process frees it by itself). */
  leaseMs: number;
}

export type AdmitRefusal =
  | 'quota_exhausted' | 'window_exhausted' | 'rpm' | 'tpm' | 'concurrency';

export type AdmitResult =
  | { ok: true; /** Opaque token to hand back at settle (what was reserved and where). */ admission: Admission }
  | { ok: false; reason: AdmitRefusal; /** ms until waiting can help (concurrency: at most 1 s, leases are usually freed by settle); undefined when it cannot (quota; a tpm estimate larger than the whole tpm). */ retryAfterMs?: number; window?: '5h' | '1d' | '7d' };

export interface Admission { keyId: string; requestId: string; minute: number; estimatedTokens: number; lease: boolean }

export type Ending = 'completed' | 'incomplete' | 'failed' | 'disconnected' | 'missing-terminal' | 'rejected' | 'timeout';

/** One metered request. Token fields follow Anthropic's split: input excludes cache reads and writes. */
export interface UsageRecord {
  request_id: string;
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
  reasoning_tokens: number;
  /** USD after the group's rate multiplier; the operator's upstream cost is never shown to key holders. */
  cost: number;
  duration_ms: number;
  ttft_ms: number | null;
  attempts?: { account: string; status: number; reason: string }[];
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
  /** Per UTC day, newest last, only days with traffic. */
  days: (UsageTotals & { date: string })[];
  models: (UsageTotals & { model: string })[];
  windows: WindowState[];
}

export interface RecordFilter { key?: string; group?: string; model?: string; from?: number; to?: number; limit: number; cursor?: string }

export interface Store {
  readonly kind: 'memory' | 'redis';

  // issued keys
  putKey(key: IssuedKey): Promise<void>;
  getKey(sha256: string): Promise<IssuedKey | undefined>;
  listKeys(): Promise<IssuedKey[]>;
  /** Apply a change (disable, limits) to the key with this id; false when there is none. */
  updateKey(id: string, patch: Partial<Pick<IssuedKey, 'disabled' | 'limits' | 'expires_at' | 'models' | 'name'>>): Promise<boolean>;
  deleteKey(id: string): Promise<boolean>;
  /**
   * Called (in every process sharing the store) whenever an issued key changes, and after the store's
   * change feed reconnects (changes may have been missed: reload). The promise, when there is one,
   * resolves once the listener is live across processes (Redis: the subscription is confirmed).
   */
  onKeysChanged(listener: () => void): void | Promise<void>;

  // limits: one round trip before the upstream call ...
  admit(req: AdmitRequest): Promise<AdmitResult>;
  heartbeat(admission: Admission, leaseMs: number, now: number): Promise<void>;
  /**
   * Give back what admit reserved (lease, tpm estimate) when the request ends without a settlement.
   * Once per request id, a no-op after settle; the rpm entry stays (the request was made). A settle after a
   * release still records, counting its actual tokens in full.
   */
  release(admission: Admission): Promise<void>;
  // ... and one after: release the lease, reconcile tokens, append the record, roll up totals. Idempotent by request id.
  // `limits` is not needed by either store today (the 5h/1d/7d windows are tracked whether or not a limit is set,
  // so a limit added later starts from the real spend); admission undefined = never admitted, still recorded.
  settle(record: UsageRecord, admission: Admission | undefined, limits: KeyLimits): Promise<{ recorded: boolean }>;

  // reads
  keyUsage(keyId: string, opts: { days: number; from?: string; to?: string; now: number }): Promise<KeyUsage>;
  records(filter: RecordFilter): Promise<{ records: UsageRecord[]; cursor?: string }>;

  close(): Promise<void>;
}
