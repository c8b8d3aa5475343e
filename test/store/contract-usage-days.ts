// Contract: usage days in the key holder's time zone (exact across a zone's midnight, DST, the documented rule for :30
// zones), the current rate (last 60 s) and the mean duration; both stores answer the same.
import type { UsageRecord } from '../../core/store/types.ts';
import { DAY, HOUR, MIN, open, record, type MakeStore, type Tap } from './fixtures.ts';

const at = (iso: string) => Date.parse(iso);
const sums = (rs: UsageRecord[]) => ({
  requests: rs.length,
  input_tokens: rs.reduce((n, r) => n + r.input_tokens, 0),
  output_tokens: rs.reduce((n, r) => n + r.output_tokens, 0),
  cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0,
  cost: Math.round(rs.reduce((n, r) => n + r.cost * 1e9, 0)) / 1e9,
});

export function usageDaysContract(t: Tap, make: MakeStore): void {
  t.test('usage days: a request either side of midnight in Asia/Shanghai lands on its local date', async (t) => {
    const s = await open(t, make);
    // Local 23:59:59.999 on Jan 15 and 00:00 on Jan 16 are the same UTC day (Jan 15, 15:59 and 16:00 UTC).
    const before = record({ time: at('2025-01-15T15:59:59.999Z'), model: 'm-a', input_tokens: 1, cost: 0.001 });
    const after = record({ time: at('2025-01-15T16:00:00.000Z'), model: 'm-b', input_tokens: 10, cost: 0.01 });
    const morning = record({ time: at('2025-01-14T20:00:00.000Z'), model: 'm-a', input_tokens: 100, cost: 0.1 }); // Jan 15, 04:00 local
    const lateEve = record({ time: at('2025-01-14T15:00:00.000Z'), model: 'm-b', input_tokens: 1000, cost: 1 }); // Jan 14, 23:00 local
    for (const r of [before, after, morning, lateEve]) await s.settle(r, undefined, {});
    const now = at('2025-01-15T17:00:00.000Z'); // Jan 16, 01:00 local

    const sh = await s.keyUsage('k1', { days: 7, now, timezone: 'Asia/Shanghai' });
    t.equal(sh.today, '2025-01-16');
    t.strictSame(sh.days, [
      { date: '2025-01-14', ...sums([lateEve]) },
      { date: '2025-01-15', ...sums([morning, before]) },
      { date: '2025-01-16', ...sums([after]) },
    ]);
    t.strictSame(sh.total, sums([before, after, morning, lateEve]));
    const jan15 = await s.keyUsage('k1', { days: 1, from: '2025-01-15', to: '2025-01-15', now, timezone: 'Asia/Shanghai' });
    t.strictSame(jan15.days, [{ date: '2025-01-16', ...sums([after]) }], 'days: 1 is today only');
    t.strictSame(jan15.models, [{ model: 'm-a', ...sums([before, morning]) }], 'models over the local Jan 15 only');

    const utc = await s.keyUsage('k1', { days: 7, now, from: '2025-01-15', to: '2025-01-15' });
    t.equal(utc.today, '2025-01-15', 'without a zone, days are UTC as before');
    t.strictSame(utc.days, [{ date: '2025-01-14', ...sums([lateEve, morning]) }, { date: '2025-01-15', ...sums([before, after]) }]);
    t.strictSame(utc.models, [{ model: 'm-a', ...sums([before]) }, { model: 'm-b', ...sums([after]) }].sort((a, b) => (a.model < b.model ? -1 : 1)));
    t.strictSame(await s.keyUsage('k1', { days: 7, now, timezone: 'UTC' }), { ...utc, models: (await s.keyUsage('k1', { days: 7, now })).models },
      'timezone=UTC is the default');
  });

  t.test('usage days: west of UTC, and across a DST change (America/New_York, a 23-hour day)', async (t) => {
    const s = await open(t, make);
    const lastOfDay = record({ time: at('2025-03-10T03:59:00Z'), input_tokens: 1 }); // Mar 9, 23:59 EDT
    const firstOfNext = record({ time: at('2025-03-10T04:00:00Z'), input_tokens: 2 }); // Mar 10, 00:00 EDT
    const firstOfDay = record({ time: at('2025-03-09T05:00:00Z'), input_tokens: 4 }); // Mar 9, 00:00 EST
    const lastOfPrev = record({ time: at('2025-03-09T04:59:59Z'), input_tokens: 8 }); // Mar 8, 23:59 EST
    for (const r of [lastOfDay, firstOfNext, firstOfDay, lastOfPrev]) await s.settle(r, undefined, {});
    const u = await s.keyUsage('k1', { days: 3, now: at('2025-03-10T12:00:00Z'), timezone: 'America/New_York' });
    t.equal(u.today, '2025-03-10');
    t.strictSame(u.days.map((d) => [d.date, d.requests, d.input_tokens]), [['2025-03-08', 1, 8], ['2025-03-09', 2, 5], ['2025-03-10', 1, 2]]);
  });

  t.test('usage days: in a :30 zone the day starts at the whole UTC hour before local midnight', async (t) => {
    const s = await open(t, make);
    // Asia/Kolkata is UTC+5:30: local midnight of Jan 16 is 18:30 UTC; the UTC hour 18:00-19:00 counts on Jan 16.
    const early = record({ time: at('2025-01-15T17:59:59Z'), input_tokens: 1 }); // 23:29:59 local, Jan 15
    const inHour = record({ time: at('2025-01-15T18:10:00Z'), input_tokens: 2 }); // 23:40 local, counted on Jan 16
    const late = record({ time: at('2025-01-15T18:45:00Z'), input_tokens: 4 }); // 00:15 local, Jan 16
    for (const r of [early, inHour, late]) await s.settle(r, undefined, {});
    const u = await s.keyUsage('k1', { days: 2, now: at('2025-01-15T18:20:00Z'), timezone: 'Asia/Kolkata' });
    t.equal(u.today, '2025-01-16', 'today follows the same rule');
    t.strictSame(u.days.map((d) => [d.date, d.input_tokens]), [['2025-01-15', 1], ['2025-01-16', 6]]);
  });

  t.test('usage days: past the hourly retention a UTC day counts whole on the local date of its midday', async (t) => {
    const s = await open(t, make);
    const old = record({ time: at('2024-09-01T20:00:00Z'), model: 'old', input_tokens: 3 }); // Sep 2, 04:00 in Shanghai
    const recent = record({ time: at('2025-01-15T20:00:00Z'), model: 'new', input_tokens: 5 }); // Jan 16, 04:00 in Shanghai
    for (const r of [old, recent]) await s.settle(r, undefined, {});
    const now = at('2025-01-16T01:00:00Z');
    const q = (from: string) => s.keyUsage('k1', { days: 1, from, to: from, now, timezone: 'Asia/Shanghai' });
    t.strictSame((await q('2024-09-01')).models.map((m) => m.model), ['old'], '136 days ago: by the UTC day');
    t.strictSame((await q('2024-09-02')).models, []);
    t.strictSame((await q('2025-01-16')).models.map((m) => m.model), ['new'], 'recent: by the hour');
    t.strictSame((await q('2025-01-15')).models, []);
  });

  t.test('usage days: an unknown zone is refused', async (t) => {
    const s = await open(t, make);
    await t.rejects(s.keyUsage('k1', { days: 1, now: Date.UTC(2025, 0, 15), timezone: 'Mars/Olympus_Mons' }), RangeError);
  });

  t.test('rate: requests and tokens settled in the last 60 whole seconds; mean duration over every request', async (t) => {
    const s = await open(t, make);
    const now = at('2025-01-15T10:00:30.500Z');
    const rs = [
      record({ time: at('2025-01-15T09:59:30.999Z'), input_tokens: 1000, duration_ms: 100 }), // its second is 60 s back: outside
      record({ time: at('2025-01-15T09:59:31.000Z'), input_tokens: 1, output_tokens: 2, cache_read_tokens: 4, cache_write_tokens: 8, reasoning_tokens: 2, duration_ms: 250 }),
      record({ time: now, input_tokens: 16, duration_ms: 1 }),
      record({ time: at('2025-01-15T10:00:31.000Z'), input_tokens: 5000, duration_ms: 2 }), // a later second: outside
      record({ time: now - 2 * HOUR, input_tokens: 7, duration_ms: 0 }),
    ];
    for (const r of rs) await s.settle(r, undefined, {});
    const u = await s.keyUsage('k1', { days: 1, now });
    t.strictSame(u.lastMinute, { requests: 2, tokens: 1 + 2 + 4 + 8 + 16 });
    t.equal(u.averageDurationMs, (100 + 250 + 1 + 2 + 0) / 5);
    const later = await s.keyUsage('k1', { days: 1, now: now + DAY });
    t.strictSame(later.lastMinute, { requests: 0, tokens: 0 }, 'nothing in the last minute');
    t.equal(later.averageDurationMs, 70.6);
    const none = await s.keyUsage('nobody', { days: 1, now });
    t.strictSame([none.lastMinute, none.averageDurationMs], [{ requests: 0, tokens: 0 }, 0]);
  });
}
