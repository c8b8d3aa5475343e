// The rows the file store's writer thread and the gateway pass each other: a batch of changes, and the state loaded at start.

/** Rollups as named in Redis: per UTC day, per day and model, per UTC hour, per hour and model. */
export type RollupKind = 'day' | 'dm' | 'hr' | 'hm';

export interface RecordRow { key: string; id: string; time: number; json: string }
/** `counters` in COUNTER_FIELDS order; null: the rollup is gone (aged out). `hour` is -1 for day rollups, `model` '' for totals. */
export interface RollupRow { key: string; kind: RollupKind; date: string; hour: number; model: string; counters: number[] | null }
/** Tokens reserved and used in one minute (tpm); null: the bucket is gone. */
export interface TpmRow { key: string; minute: number; tokens: number | null }
/** Requests and tokens settled in one second (the current rate); null: the second is gone. */
export interface RateRow { key: string; second: number; counts: [requests: number, tokens: number] | null }
/** A key's rpm admissions of one second as a batch saw them: `ats` their ms into it; `id` the first's (the row's name). */
export interface RpmRow { key: string; second: number; id: string; ats: string }
/** Lifetime spend, totals, spend windows and summed durations of one key (KeptLedger as JSON). */
export interface LedgerRow { key: string; json: string }
/** An account's KeptAccount as JSON; null: forgotten. */
export interface AccountRow { group: string; id: string; json: string | null }
/** account null: unbound. */
export interface BindingRow { group: string; kind: string; name: string; account: string | null; expires: number }
/** A kept conversation (Store.putConversation); value null: gone. */
export interface ConversationRow { key: string; id: string; value: string | null; expires: number }
export interface KeyRow { sha256: string; id: string; json: string }

/** Every change since the last batch, as the values to write (not deltas): writing a batch twice is harmless. */
export interface Batch {
  seq: number;
  /** Issued keys by id: every row of these ids is replaced by `rows` (none: deleted). */
  keyIds: string[];
  keys: KeyRow[];
  /** The records settled since the last batch, as record-bytes.ts lays them out (readRecords). */
  records: Uint8Array;
  ledgers: LedgerRow[];
  rollups: RollupRow[];
  tpm: TpmRow[];
  rate: RateRow[];
  rpm: RpmRow[];
  accounts: AccountRow[];
  bindings: BindingRow[];
  conversations: ConversationRow[];
}

/** What the store reads at start: every table, records oldest first. */
export type Loaded = Omit<Batch, 'seq' | 'keyIds' | 'records'> & { records: RecordRow[] };

/** Limits the writer prunes by, as the memory store applies them. */
export interface WriterOptions { path: string; retentionMs: number; recordsPerKey: number; recordsTotal: number }

/** Messages to the writer thread; `id` names one open file (a process may have several stores open: tests). */
export type ToWriter =
  | { id: number; type: 'open'; options: WriterOptions }
  | { id: number; type: 'batch'; batch: Batch }
  | { id: number; type: 'close' };
export type FromWriter = { id: number } & (
  /** The file is open, locked and pruned: the store reads it (load.ts), then sends batches. */
  | { type: 'ready' }
  | { type: 'open-failed'; message: string }
  | { type: 'written'; seq: number; ms: number }
  | { type: 'write-failed'; seq: number; message: string }
  | { type: 'closed'; /** batches that could not be written (the last write failed) */ unwritten: number }
  /** The thread itself stopped (thread.ts tells every store): nothing more is written. */
  | { type: 'stopped'; message: string });

/** A LedgerRow's JSON: the parts of a KeyLedger (memory/ledger.ts) that are not rollups, rates or records. */
export interface KeptLedger {
  spend: number;
  total: Record<string, number>;
  windows: Record<string, { start: number; used: number }>;
  duration: { ms: number; requests: number };
}
