// Contract: money limits (lifetime quota, 5h/1d/7d windows) and settle idempotence.
import { DAY, HOUR, T0, admitReq, open, record, type MakeStore, type Tap } from './fixtures.ts';

export function spendContract(t: Tap, make: MakeStore): void {
  t.test('quota: refused once lifetime spend reaches quota_usd; 0 means unlimited', async (t) => {
    const s = await open(t, make);
    const lim = { quota_usd: 1 };
    await s.settle(record({ cost: 0.6 }), undefined, lim);
    t.equal((await s.admit(admitReq(lim, T0))).ok, true);
    await s.settle(record({ cost: 0.399999999 }), undefined, lim);
    t.equal((await s.admit(admitReq(lim, T0))).ok, true, '0.999999999 < 1: nano-dollar exact');
    await s.settle(record({ cost: 0.000000001 }), undefined, lim);
    t.strictSame(await s.admit(admitReq(lim, T0 + 400 * DAY)), { ok: false, reason: 'quota_exhausted' }, 'exactly 1.0: refused, forever');
    t.equal((await s.admit(admitReq({ quota_usd: 0 }, T0))).ok, true, 'quota 0 is unlimited');
    t.equal((await s.admit(admitReq({ quota_usd: 2 }, T0))).ok, true);
  });

  t.test('windows: fixed windows from the first spend, reset after their length', async (t) => {
    const s = await open(t, make);
    const lim = { usd_5h: 1, usd_1d: 3, usd_7d: 10 };
    await s.settle(record({ time: T0, cost: 0.5 }), undefined, lim);
    await s.settle(record({ time: T0 + HOUR, cost: 0.5 }), undefined, lim);
    t.strictSame(await s.admit(admitReq(lim, T0 + 2 * HOUR)),
      { ok: false, reason: 'window_exhausted', retryAfterMs: 3 * HOUR, window: '5h' });
    let u = await s.keyUsage('k1', { days: 1, now: T0 + 2 * HOUR });
    t.strictSame(u.windows, [
      { window: '5h', used: 1, start: T0 }, { window: '1d', used: 1, start: T0 }, { window: '7d', used: 1, start: T0 },
    ]);
    t.equal((await s.admit(admitReq(lim, T0 + 5 * HOUR))).ok, true, 'the 5h window ended');
    u = await s.keyUsage('k1', { days: 1, now: T0 + 5 * HOUR });
    t.strictSame(u.windows[0], { window: '5h', used: 0, start: null }, 'an ended window shows as not started');
    // The next spend restarts the 5h window; the 1d and 7d windows keep counting.
    await s.settle(record({ time: T0 + 6 * HOUR, cost: 2 }), undefined, lim);
    u = await s.keyUsage('k1', { days: 1, now: T0 + 6 * HOUR });
    t.strictSame(u.windows, [
      { window: '5h', used: 2, start: T0 + 6 * HOUR }, { window: '1d', used: 3, start: T0 }, { window: '7d', used: 3, start: T0 },
    ]);
    // 5h and 1d exhausted: only the later reset (1d, at T0 + 24h) makes waiting worthwhile.
    t.strictSame(await s.admit(admitReq(lim, T0 + 7 * HOUR)),
      { ok: false, reason: 'window_exhausted', retryAfterMs: 17 * HOUR, window: '1d' });
    t.equal((await s.admit(admitReq(lim, T0 + DAY))).ok, true);
    t.equal((await s.admit(admitReq({ usd_5h: 0, usd_1d: 0 }, T0 + 7 * HOUR))).ok, true, 'absent or 0 window limits are unlimited');
    await s.settle(record({ time: T0 + 2 * DAY, cost: 7 }), undefined, lim);
    t.strictSame(await s.admit(admitReq(lim, T0 + 3 * DAY)),
      { ok: false, reason: 'window_exhausted', retryAfterMs: 4 * DAY, window: '7d' });
    t.equal((await s.admit(admitReq(lim, T0 + 7 * DAY))).ok, true);
  });

  t.test('settle is idempotent by request id', async (t) => {
    const s = await open(t, make);
    const lim = { concurrency: 1, quota_usd: 10 };
    const a = await s.admit(admitReq(lim, T0, { requestId: 'dup' }));
    if (!a.ok) return t.fail('admit');
    const r = record({ request_id: 'dup', input_tokens: 10, output_tokens: 5, cost: 0.25 });
    t.strictSame(await s.settle(r, a.admission, lim), { recorded: true });
    const b = await s.admit(admitReq(lim, T0 + 1));
    if (!b.ok) return t.fail('admit b');
    t.strictSame(await s.settle({ ...r, cost: 9 }, a.admission, lim), { recorded: false });
    t.equal((await s.admit(admitReq(lim, T0 + 2))).ok, false, 'a repeated settle did not release another lease');
    const u = await s.keyUsage('k1', { days: 1, now: T0 });
    t.equal(u.total.requests, 1);
    t.equal(u.total.cost, 0.25);
    t.equal(u.windows[0].used, 0.25);
    t.equal((await s.records({ limit: 10 })).records.length, 1);
    t.equal((await s.records({ key: 'k1', limit: 10 })).records.length, 1);
    t.strictSame(await s.settle({ ...r, time: T0 + 2 * HOUR }, a.admission, lim), { recorded: false }, 'still a repeat hours later (its record is kept)');
    t.equal((await s.keyUsage('k1', { days: 1, now: T0 })).total.requests, 1);
  });

  t.test('settle checks its arguments', async (t) => {
    const s = await open(t, make);
    const a = await s.admit(admitReq({}, T0, { keyId: 'k1' }));
    if (!a.ok) return t.fail('admit');
    await t.rejects(s.settle(record({ key_id: 'k2' }), a.admission, {}), /admission is for key k1/);
    await t.rejects(s.settle(record({ request_id: '' }), undefined, {}), /request_id/);
  });
}
