// The file store's journal marks every rollup and per-second count a settlement touched, whatever the order: repeated
// settlements of one key, model and hour are marked once, a change of any of them (and back) marks again, and a taken
// batch starts the marking afresh.
import t from 'tap';
import { Journal, type MemoryState } from '../../core/store/file/journal.ts';
import { KeyLedger } from '../../core/store/memory/ledger.ts';
import { readRecords } from '../../core/store/file/record-bytes.ts';
import { settlementOf } from '../../core/store/rules/ledger.ts';
import { HOUR, T0, record } from './fixtures.ts';
import type { UsageRecord } from '../../core/store/types.ts';

const state: MemoryState = { keys: new Map(), ledgers: new Map([['A', new KeyLedger()], ['B', new KeyLedger()]]), accounts: { kept: () => undefined, keptBinding: () => undefined } as never, conversations: { kept: () => undefined } as never };

const settle = (j: Journal, over: Partial<UsageRecord>) => {
  const r = record(over);
  j.settled(r, settlementOf(r), JSON.stringify(r), undefined);
};

const rollups = (j: Journal, seq: number) => {
  const b = j.take(state, seq);
  return {
    rollups: b.rollups.map((r) => `${r.key}/${r.kind}/${r.date}/${r.hour}/${r.model}`).sort(),
    rate: b.rate.map((r) => `${r.key}/${r.second}`).sort(),
    records: [...readRecords(b.records)].length,
  };
};

/** What a settlement of key/model at time marks, as rollups() lists it. */
function marks(key: string, model: string, time: number): string[] {
  const date = new Date(time).toISOString().slice(0, 10);
  const hour = new Date(time).getUTCHours();
  return [`${key}/day/${date}/-1/`, `${key}/dm/${date}/-1/${model}`, `${key}/hr/${date}/${hour}/`, `${key}/hm/${date}/${hour}/${model}`];
}

t.test('every key, model, hour and second settled is in the batch, repeats marked once', async (t) => {
  const j = new Journal();
  const seq: [string, string, number][] = [
    ['A', 'm1', T0], ['A', 'm1', T0 + 10], ['A', 'm1', T0 + 1500], ['A', 'm2', T0 + 1600], ['A', 'm1', T0 + 1700],
    ['B', 'm1', T0 + 1800], ['A', 'm1', T0 + 1900], ['A', 'm1', T0 + HOUR], ['A', 'm1', T0 + HOUR + 5],
  ];
  for (const [key, model, time] of seq) settle(j, { key_id: key, model, time });
  const got = rollups(j, 1);
  const want = [...new Set(seq.flatMap(([k, m, time]) => marks(k, m, time)))].sort();
  t.same(got.rollups, want);
  t.same(got.rate, [...new Set(seq.map(([k, , time]) => `${k}/${Math.floor(time / 1000)}`))].sort());
  t.equal(got.records, seq.length);
});

t.test('after a batch is taken, the same key, model and hour are marked again', async (t) => {
  const j = new Journal();
  settle(j, { key_id: 'A', model: 'm1', time: T0 });
  t.equal(rollups(j, 1).rollups.length, 4);
  settle(j, { key_id: 'A', model: 'm1', time: T0 + 1 });
  const again = rollups(j, 2);
  t.same(again.rollups, marks('A', 'm1', T0).sort());
  t.same(again.rate, [`A/${Math.floor(T0 / 1000)}`]);
});
