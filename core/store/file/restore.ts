// Puts the state the file store loaded back into a MemoryStore's maps: the inverse of journal.ts.
import type { IssuedKey, UsageRecord } from '../types.ts';
import type { MemorySummary } from '../summary.ts';
import type { KeyLedger } from '../memory/ledger.ts';
import { recordEntry, type MemoryRecordIndex } from '../memory/record-index.ts';
import type { KeptAccount } from '../memory/accounts.ts';
import type { KeptLedger, Loaded, RollupRow } from './rows.ts';
import type { MemoryState } from './journal.ts';
import { COUNTER_FIELDS, emptyCounters, type Counters } from '../rollup.ts';
import { at } from '../rules/ledger.ts';

export interface RestoreTarget extends MemoryState {
  ledger(key: string): KeyLedger;
  global: MemoryRecordIndex;
  /** The gateway-wide rollups of the overview: not written to the file, rebuilt from the records kept. */
  summary: MemorySummary;
  opts: { retentionMs: number; recordsPerKey: number; recordsTotal: number };
}

function countersOf(values: number[]): Counters {
  const c = emptyCounters();
  COUNTER_FIELDS.forEach((f, i) => { c[f] = values[i] ?? 0; });
  return c;
}

function restoreRollup(l: KeyLedger, r: RollupRow): void {
  const c = countersOf(r.counters ?? []);
  if (r.kind === 'day') l.days.set(r.date, c);
  else if (r.kind === 'dm') at(l.dayModels, r.date, () => new Map()).set(r.model, c);
  else if (r.kind === 'hr') at(l.hours, r.date, () => new Map()).set(r.hour, c);
  else at(at(l.hourModels, r.date, () => new Map()), r.hour, () => new Map()).set(r.model, c);
}

/** Loads `state` into an empty memory store: records oldest first, aged and capped as when settled, texts left out. */
export function restore(into: RestoreTarget, state: Loaded): void {
  for (const k of state.keys) into.keys.set(k.sha256, JSON.parse(k.json) as IssuedKey);
  for (const row of state.ledgers) {
    const kept = JSON.parse(row.json) as KeptLedger;
    const l = into.ledger(row.key);
    l.spend = kept.spend;
    Object.assign(l.total, kept.total);
    l.windows = kept.windows;
    l.duration = kept.duration;
  }
  for (const r of state.rollups) restoreRollup(into.ledger(r.key), r);
  for (const t of state.tpm) into.ledger(t.key).tpm.set(t.minute, t.tokens ?? 0);
  for (const s of state.rate) {
    if (s.counts) into.ledger(s.key).perSecond.set(s.second, { requests: s.counts[0], tokens: s.counts[1] });
  }
  for (const r of state.rpm) {
    // Each admission under a name of its own (the row's and its place in it): only their times count from now on.
    const rpm = into.ledger(r.key).rpm;
    r.ats.split(',').forEach((ms, i) => {
      const at = r.second * 1000 + Number(ms);
      if (ms !== '' && Number.isInteger(at)) rpm.set(i ? `${r.id}#${i}` : r.id, at);
    });
  }
  const { retentionMs, recordsPerKey, recordsTotal } = into.opts;
  for (const r of state.records) {
    const entry = recordEntry({ request_id: r.id, time: r.time, key_id: r.key }, undefined);
    into.ledger(r.key).records.add(entry, recordsPerKey, r.time - retentionMs);
    into.global.add(entry, recordsTotal, r.time - retentionMs);
    into.summary.add(JSON.parse(r.json) as UsageRecord);
  }
  for (const a of state.accounts) if (a.json) into.accounts.restore(a.group, a.id, JSON.parse(a.json) as KeptAccount);
  for (const b of state.bindings) if (b.account) into.accounts.restoreBinding(b.group, b.kind, b.name, { account: b.account, expires: b.expires });
  for (const c of state.conversations) if (c.value !== null) into.conversations.restore(c.key, c.id, { value: c.value, expires: c.expires });
}
