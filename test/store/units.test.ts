// The store's clock arithmetic: the UTC date of an instant, right in whatever order days are asked for (utcDate keeps
// the last day's text).
import t from 'tap';
import { DAY_MS, dateRange, utcDate } from '../../core/store/units.ts';

t.test('utcDate names the UTC day of an instant, however the days asked for alternate', async (t) => {
  const now = Date.parse('2026-12-02T23:59:59.999Z');
  const days = [now, now - 400 * DAY_MS, now + 1, now - 400 * DAY_MS, now, Date.parse('2024-02-29T00:00:00Z'), now + 1, now];
  t.strictSame(days.map(utcDate), ['2026-12-02', '2025-10-28', '2026-12-03', '2025-10-28', '2026-12-02', '2024-02-29', '2026-12-03', '2026-12-02']);
  const wrong: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const ms = Math.floor(Math.random() * 4e12);
    if (utcDate(ms) !== new Date(ms).toISOString().slice(0, 10)) wrong.push(ms);
  }
  t.strictSame(wrong, [], 'random instants');
  t.strictSame(dateRange('2024-02-28', '2024-03-01'), ['2024-02-28', '2024-02-29', '2024-03-01']);
});
