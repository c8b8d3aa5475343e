// The file store's journal: what changed since the last batch (a few map sets per call), read into the batch's values
// when it is taken, so a busy key's totals and rollups are written once a batch.
import { toFront } from '../memory/columns.ts';
import { H, hashId } from '../memory/id-table.ts';
import type { IssuedKey, UsageRecord } from '../types.ts';
import type { AccountBook } from '../memory/accounts.ts';
import type { ConversationBook } from '../memory/conversations.ts';
import type { KeyLedger } from '../memory/ledger.ts';
import type { Batch, KeptLedger, RollupKind, RollupRow, RpmRow } from './rows.ts';
import { RecordBytes } from './record-bytes.ts';
import { COUNTER_FIELDS, type Counters } from '../rollup.ts';
import type { Settlement } from '../rules/ledger.ts';

/** The parts of a MemoryStore the file store keeps. */
export interface MemoryState {
  keys: Map<string, IssuedKey>;
  ledgers: Map<string, KeyLedger>;
  accounts: AccountBook;
  conversations: ConversationBook;
}

// Names from clients (models, session names) come last in a composite key, so a separator inside one cannot collide.
const SEP = '\u0000';

const counters = (c: Counters | undefined): number[] | null => (c ? COUNTER_FIELDS.map((f) => c[f]) : null);

function rollup(l: KeyLedger | undefined, r: Omit<RollupRow, 'counters'>): Counters | undefined {
  switch (r.kind) {
    case 'day': return l?.days.get(r.date);
    case 'dm': return l?.dayModels.get(r.date)?.get(r.model);
    case 'hr': return l?.hours.get(r.date)?.get(r.hour);
    case 'hm': return l?.hourModels.get(r.date)?.get(r.hour)?.get(r.model);
  }
}

export class Journal {
  private keyIds = new Set<string>();
  /** Reused from batch to batch: its bytes are copied out when taken. */
  readonly records = new RecordBytes();
  private ledgers = new Set<string>();
  private rollups = new Map<string, Omit<RollupRow, 'counters'>>();
  private tpm = new Map<string, { key: string; minute: number }>();
  private rate = new Map<string, { key: string; second: number }>();
  // Admissions in columns (the first rpmCount), not an object each that would live to the old generation; an id only
  // for the first of a key and second (its row's name, rpmRows), the rest known by hash.
  private rpmCount = 0;
  private rpmKeys: (string | undefined)[] = [];
  private rpmNames: (string | undefined)[] = [];
  private rpmHashes = new Int32Array(0);
  private rpmAts = new Float64Array(0);
  private accounts = new Map<string, { group: string; id: string }>();
  private bindings = new Map<string, { group: string; kind: string; name: string }>();
  private conversations = new Map<string, { key: string; id: string }>();
  /** What the last settlement marked (its rollups and second), since the journal was last taken. */
  private last: { key: string; model: string; date: string; hour: number; second: number } | undefined;
  /** The tpm bucket and the account marked last (marked again by most requests), since the journal was last taken. */
  private lastMinute: { key: string; minute: number } | undefined;
  private lastAccount: { group: string; id: string } | undefined;
  private dirty = false;

  get empty(): boolean { return !this.dirty; }

  key(id: string): void {
    this.keyIds.add(id);
    this.dirty = true;
  }

  /** A request admitted: its rpm entry (kept when the key has an rpm limit) and the minute of its tpm estimate, if any. */
  admitted(key: string, id: string, at: number, minute: number | undefined): void {
    const n = this.rpmCount++;
    if (n === this.rpmAts.length) this.growRpm();
    const first = n === 0 || this.rpmKeys[n - 1] !== key || Math.floor(this.rpmAts[n - 1] / 1000) !== Math.floor(at / 1000);
    hashId(id);
    this.rpmKeys[n] = key;
    this.rpmNames[n] = first ? id : undefined;
    this.rpmHashes[2 * n] = H[0];
    this.rpmHashes[2 * n + 1] = H[1];
    this.rpmAts[n] = at;
    if (minute !== undefined) this.minute(key, minute);
    this.dirty = true;
  }

  private growRpm(): void {
    const n = Math.max(256, this.rpmAts.length * 2);
    const full = this.rpmAts.length;
    this.rpmHashes = toFront(this.rpmHashes, 0, full, n, 2);
    this.rpmAts = toFront(this.rpmAts, 0, full, n);
  }

  /** A tpm bucket that changed (an estimate reserved, given back or reconciled). */
  minute(key: string, minute: number): void {
    // Most marks repeat the last one (a key's requests of one minute): it is in the map already.
    if (this.lastMinute?.key !== key || this.lastMinute.minute !== minute) {
      this.tpm.set(key + SEP + minute, this.lastMinute = { key, minute });
    }
    this.dirty = true;
  }

  settled(r: UsageRecord, s: Settlement, json: string, minute: number | undefined): void {
    const key = r.key_id;
    this.records.add(key, r.request_id, s.clock, json);
    this.ledgers.add(key);
    // Most settlements in a batch share the last one's key, model and hour: its rollups are marked already.
    let last = this.last;
    const { model, date, hour, second } = s;
    if (!last || last.key !== key || last.model !== model || last.date !== date || last.hour !== hour) {
      this.mark(key, 'day', date, -1, '');
      this.mark(key, 'dm', date, -1, model);
      this.mark(key, 'hr', date, hour, '');
      this.mark(key, 'hm', date, hour, model);
      this.last = last = { key, model, date, hour, second: NaN };
    }
    if (last.second !== second) {
      this.rate.set(key + SEP + second, { key, second });
      last.second = second;
    }
    if (minute !== undefined) this.minute(key, minute);
    this.dirty = true;
  }

  private mark(key: string, kind: RollupKind, date: string, hour: number, model: string): void {
    this.rollups.set(key + SEP + kind + SEP + date + SEP + hour + SEP + model, { key, kind, date, hour, model });
  }

  account(group: string, id: string): void {
    if (this.lastAccount?.group !== group || this.lastAccount.id !== id) {
      this.accounts.set(group + SEP + id, this.lastAccount = { group, id });
    }
    this.dirty = true;
  }

  binding(group: string, kind: string, name: string): void {
    this.bindings.set(group + SEP + kind + SEP + name, { group, kind, name });
    this.dirty = true;
  }

  conversation(key: string, id: string): void {
    this.conversations.set(key + SEP + id, { key, id });
    this.dirty = true;
  }

  /** The current values of everything marked, and a clean journal. */
  take(state: MemoryState, seq: number): Batch {
    const { ledgers, accounts } = state;
    const batch: Batch = {
      seq,
      keyIds: [...this.keyIds],
      keys: this.keyIds.size ? [...state.keys.values()].filter((k) => this.keyIds.has(k.id)).map((k) => ({ sha256: k.sha256, id: k.id, json: JSON.stringify(k) })) : [],
      records: this.records.take(),
      ledgers: [...this.ledgers].map((key) => ({ key, json: JSON.stringify(kept(ledgers.get(key)!)) })),
      rollups: [...this.rollups.values()].map((r) => ({ ...r, counters: counters(rollup(ledgers.get(r.key), r)) })),
      tpm: [...this.tpm.values()].map((t) => ({ ...t, tokens: ledgers.get(t.key)?.tpm.get(t.minute) ?? null })),
      rate: [...this.rate.values()].map((s) => {
        const r = ledgers.get(s.key)?.perSecond.get(s.second);
        return { ...s, counts: r ? [r.requests, r.tokens] : null };
      }),
      rpm: rpmRows(this.rpmCount, this.rpmKeys, this.rpmNames, this.rpmAts, (i, key, at) => ledgers.get(key)?.rpm.getHashed(this.rpmHashes[2 * i], this.rpmHashes[2 * i + 1]) === at),
      accounts: [...this.accounts.values()].map((a) => {
        const k = accounts.kept(a.group, a.id);
        return { ...a, json: k ? JSON.stringify(k) : null };
      }),
      bindings: [...this.bindings.values()].map((b) => {
        const k = accounts.keptBinding(b.group, b.kind, b.name);
        return { ...b, account: k?.account ?? null, expires: k?.expires ?? 0 };
      }),
      conversations: [...this.conversations.values()].map((c) => {
        const k = state.conversations.kept(c.key, c.id);
        return { ...c, value: k?.value ?? null, expires: k?.expires ?? 0 };
      }),
    };
    this.clear();
    return batch;
  }

  clear(): void {
    this.keyIds = new Set();
    this.records.clear();
    this.ledgers = new Set();
    this.rollups = new Map();
    this.tpm = new Map();
    this.rate = new Map();
    // The names go (ids the columns would otherwise keep alive); keys are the ledgers' own strings.
    this.rpmNames.fill(undefined, 0, this.rpmCount);
    this.rpmCount = 0;
    this.accounts = new Map();
    this.bindings = new Map();
    this.conversations = new Map();
    this.last = this.lastMinute = this.lastAccount = undefined;
    this.dirty = false;
  }
}

/**
 * The admissions still `kept`, as a row per key and second (RpmRow), named by its first admission's id so that rows of
 * one second from two batches do not replace each other.
 */
function rpmRows(count: number, keys: (string | undefined)[], names: (string | undefined)[], ats: Float64Array, kept: (i: number, key: string, at: number) => boolean): RpmRow[] {
  const rows = new Map<string, RpmRow>();
  let last: RpmRow | undefined;
  for (let i = 0; i < count; i++) {
    const key = keys[i]!, at = ats[i];
    const second = Math.floor(at / 1000);
    // Most admissions share the last one's key and second. A row is made by its first admission, kept or not (the
    // one that carries a name); rows no kept admission joined are left out.
    if (last?.key !== key || last.second !== second) {
      const row = key + SEP + second;
      last = rows.get(row);
      if (!last) rows.set(row, (last = { key, second, id: names[i]!, ats: '' }));
    }
    if (!kept(i, key, at)) continue;
    const ms = String(at - second * 1000);
    last.ats = last.ats === '' ? ms : `${last.ats},${ms}`;
  }
  return [...rows.values()].filter((r) => r.ats !== '');
}

const kept = (l: KeyLedger): KeptLedger => ({ spend: l.spend, total: l.total, windows: l.windows, duration: l.duration });
