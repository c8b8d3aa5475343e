// Contract: rollups (totals, days, models) exact to the nano-dollar, and record listings (paging, filters, caps, retention).
import { MODEL_ROWS, OTHER_MODEL } from '../../core/store/rollup.ts';
import type { UsageRecord } from '../../core/store/types.ts';
import { DAY, HOUR, T0, admitReq, open, record, type MakeStore, type Tap } from './fixtures.ts';

const NANO = 1e9;
const sumNano = (rs: UsageRecord[]) => rs.reduce((n, r) => n + Math.round(r.cost * NANO), 0);

export function ledgerContract(t: Tap, make: MakeStore): void {
  t.test('rollups: totals, UTC days and models are exact', async (t) => {
    const s = await open(t, make);
    const rs: UsageRecord[] = [];
    for (let i = 0; i < 60; i++) {
      rs.push(record({
        request_id: `roll-${i}`, time: T0 - (i % 3) * DAY + i * 1000, model: i % 4 === 0 ? 'gpt-y' : 'claude-x',
        input_tokens: 100 + i, output_tokens: 7 * i, cache_read_tokens: i % 5, cache_write_tokens: 3, reasoning_tokens: i % 2,
        cost: 0.000123457 * (i + 1) + 0.1,
      }));
    }
    // Admitted or not (a refusal recorded without admission), every record rolls up.
    const a = await s.admit(admitReq({}, T0, { requestId: 'roll-0' }));
    if (!a.ok) return t.fail('admit');
    for (const r of rs) await s.settle(r, r.request_id === 'roll-0' ? a.admission : undefined, {});
    const sum = (f: keyof UsageRecord, xs = rs) => xs.reduce((n, r) => n + (r[f] as number), 0);
    const totals = (xs: UsageRecord[]) => ({
      requests: xs.length, input_tokens: sum('input_tokens', xs), output_tokens: sum('output_tokens', xs),
      cache_read_tokens: sum('cache_read_tokens', xs), cache_write_tokens: sum('cache_write_tokens', xs),
      reasoning_tokens: sum('reasoning_tokens', xs), cost: sumNano(xs) / NANO,
    });
    const u = await s.keyUsage('k1', { days: 7, now: T0 + HOUR });
    t.strictSame(u.total, totals(rs));
    const day = (d: number) => rs.filter((r) => Math.floor(r.time / DAY) === Math.floor((T0 - d * DAY) / DAY));
    t.strictSame(u.days, [
      { date: '2025-01-13', ...totals(day(2)) }, { date: '2025-01-14', ...totals(day(1)) }, { date: '2025-01-15', ...totals(day(0)) },
    ], 'only days with traffic, newest last');
    const byModel = (m: string, xs = rs) => ({ model: m, ...totals(xs.filter((r) => r.model === m)) });
    t.strictSame(u.models, [byModel('claude-x'), byModel('gpt-y')], 'busiest model first');

    const two = await s.keyUsage('k1', { days: 2, from: '2025-01-14', to: '2025-01-14', now: T0 });
    t.strictSame(two.days.map((d) => d.date), ['2025-01-14', '2025-01-15']);
    t.strictSame(two.models, [byModel('claude-x', day(1)), byModel('gpt-y', day(1))], 'models over [from, to] only');
    const none = await s.keyUsage('nobody', { days: 30, now: T0 });
    t.strictSame(none, {
      total: { requests: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, cost: 0 },
      today: '2025-01-15',
      days: [], models: [], windows: [{ window: '5h', used: 0, start: null }, { window: '1d', used: 0, start: null }, { window: '7d', used: 0, start: null }],
      averageDurationMs: 0, lastMinute: { requests: 0, tokens: 0 },
    });
  });

  t.test('rollups: a record marked other counts under other; a usage answer lists the busiest MODEL_ROWS and other', async (t) => {
    const s = await open(t, make);
    const rs: UsageRecord[] = [
      ...Array.from({ length: 3 }, () => record({ model: 'busy', output_tokens: 2, cost: 0.5 })),
      ...Array.from({ length: MODEL_ROWS + 5 }, (_, i) => record({ model: `m-${String(i).padStart(3, '0')}`, output_tokens: 1, cost: 0.1, time: T0 + i })),
      record({ model: 'refused-1', status: 400, rollup_model: OTHER_MODEL }),
      record({ model: 'refused-2', status: 400, rollup_model: OTHER_MODEL }),
    ];
    for (const r of rs) await s.settle(r, undefined, {});
    const u = await s.keyUsage('k1', { days: 1, now: T0 + HOUR });
    t.equal(u.models.length, MODEL_ROWS + 1);
    t.match(u.models[0], { model: 'busy', requests: 3, output_tokens: 6 }, 'busiest first');
    t.strictSame(u.models.slice(1, MODEL_ROWS).map((m) => m.model), rs.slice(3, 2 + MODEL_ROWS).map((r) => r.model), 'then by name');
    t.match(u.models[MODEL_ROWS], { model: OTHER_MODEL, requests: 6 + 2, output_tokens: 6, cost: 0.6 }, 'the rest and the records marked other');
    t.equal(u.models.reduce((n, m) => n + m.requests, 0), u.total.requests, 'every request once');
    const [day] = await s.usageBuckets('day', T0, T0);
    t.notOk(day.usage.some((b) => b.model.startsWith('refused-')), 'the gateway-wide rollups count them under other too');
    t.match(day.usage.find((b) => b.model === OTHER_MODEL), { requests: 2, errors: 2 });
    t.match((await s.records({ model: 'refused-1', limit: 5 })).records, [{ model: 'refused-1', rollup_model: OTHER_MODEL }], 'the record keeps its name');
  });

  t.test('rollups: a thousand nano-dollar additions stay exact', async (t) => {
    const s = await open(t, make);
    await Promise.all(Array.from({ length: 1000 }, (_, i) => s.settle(record({ request_id: `nano-${i}`, cost: 0.000000001 + 0.1 }), undefined, {})));
    const u = await s.keyUsage('k1', { days: 1, now: T0 });
    t.equal(u.total.cost, 100.000001);
    t.equal(u.total.requests, 1000);
  });

  t.test('records: newest first, paging by cursor, filters', async (t) => {
    const s = await open(t, make);
    const rs: UsageRecord[] = [];
    for (let i = 0; i < 23; i++) {
      // Several records share a millisecond: paging must neither skip nor repeat them.
      rs.push(record({
        request_id: `p-${String(i).padStart(2, '0')}`, time: T0 + Math.floor(i / 3) * 1000,
        key_id: i % 2 ? 'k1' : 'k2', group: i % 3 ? 'g1' : 'g2', model: i % 4 ? 'm1' : 'm2', cost: i / 100,
      }));
    }
    for (const r of [...rs].reverse()) await s.settle(r, undefined, {});
    const order = [...rs].sort((a, b) => b.time - a.time || (a.request_id < b.request_id ? 1 : -1));
    const ids = (xs: UsageRecord[]) => xs.map((r) => r.request_id);
    async function all(filter: Omit<Parameters<typeof s.records>[0], 'limit' | 'cursor'>, limit: number) {
      const out: UsageRecord[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await s.records({ ...filter, limit, cursor });
        out.push(...page.records);
        cursor = page.cursor;
        if (cursor) t.equal(page.records.length, limit, 'a page with a cursor is full');
        if (++pages > 50) throw new Error('paging does not end');
      } while (cursor);
      return out;
    }
    t.strictSame(ids(await all({}, 5)), ids(order), 'global: every record once, newest first');
    t.strictSame((await s.records({ limit: 23 })).cursor, undefined, 'no cursor when nothing follows');
    t.strictSame(await all({}, 23), order, 'records come back as settled');
    t.strictSame(ids(await all({ key: 'k1' }, 4)), ids(order.filter((r) => r.key_id === 'k1')));
    t.strictSame(ids(await all({ key: 'k2', model: 'm2' }, 2)), ids(order.filter((r) => r.key_id === 'k2' && r.model === 'm2')));
    t.strictSame(ids(await all({ group: 'g2' }, 3)), ids(order.filter((r) => r.group === 'g2')));
    t.strictSame(ids(await all({ model: 'm1', group: 'g1' }, 100)), ids(order.filter((r) => r.model === 'm1' && r.group === 'g1')));
    const from = T0 + 2000;
    const to = T0 + 5000;
    t.strictSame(ids(await all({ from, to }, 4)), ids(order.filter((r) => r.time >= from && r.time <= to)), 'time range is inclusive');
    t.strictSame(ids(await all({ key: 'k1', from, to }, 1)), ids(order.filter((r) => r.key_id === 'k1' && r.time >= from && r.time <= to)));
    t.strictSame(await s.records({ key: 'nobody', limit: 5 }), { records: [] });
    // The caller's mistake (a RangeError, which guard.ts never takes for an outage), before the store is asked.
    for (const cursor of ['garbage', '1:99999999999999999999', '99999999999999999999:0', '1.5:0']) {
      await t.rejects(s.records({ limit: 5, cursor }), RangeError, `cursor ${cursor} refused`);
    }
  });

  t.test('records: capped per key and in total; older than the retention dropped', async (t) => {
    const s = await open(t, make, { recordsPerKey: 5, recordsTotal: 8, retentionDays: 2 });
    for (let i = 0; i < 12; i++) {
      await s.settle(record({ request_id: `c-${String(i).padStart(2, '0')}`, key_id: i < 6 ? 'ka' : 'kb', time: T0 + i }), undefined, {});
    }
    t.strictSame((await s.records({ key: 'ka', limit: 100 })).records.map((r) => r.request_id), ['c-05', 'c-04', 'c-03', 'c-02', 'c-01']);
    t.strictSame((await s.records({ limit: 100 })).records.map((r) => r.request_id),
      ['c-11', 'c-10', 'c-09', 'c-08', 'c-07', 'c-06', 'c-05', 'c-04']);
    await s.settle(record({ request_id: 'late', key_id: 'ka', time: T0 + 2 * DAY + 3 }), undefined, {});
    t.strictSame((await s.records({ key: 'ka', limit: 100 })).records.map((r) => r.request_id), ['late', 'c-05', 'c-04', 'c-03'],
      'records more than 2 days older than the newest are gone');
    t.equal((await s.keyUsage('ka', { days: 7, now: T0 + 2 * DAY })).total.requests, 7, 'rollups outlive records');
  });
}
