// Contract: money limits (lifetime quota, 5h/1d/7d windows) and settle idempotence.
import { DAY, HOUR, MIN, T0, admitReq, open, record, type MakeStore, type Tap } from './fixtures.ts';

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

  t.test('holds: the estimated cost of requests in flight counts as spent until they settle', async (t) => {
    const s = await open(t, make);
    const lim = { quota_usd: 1 };
    await s.settle(record({ cost: 0.5 }), undefined, lim);
    const a = await s.admit(admitReq(lim, T0, { estimatedCost: 0.3 }));
    if (!a.ok) return t.fail('admit a');
    t.equal(a.admission.estimatedCost, 0.3, 'the admission says what it holds');
    const b = await s.admit(admitReq(lim, T0 + 10, { estimatedCost: 0.3 }));
    if (!b.ok) return t.fail('admit b: 0.5 spent + 0.3 held is below the quota');
    t.strictSame(await s.admit(admitReq(lim, T0 + 20, { estimatedCost: 0.01 })),
      { ok: false, reason: 'quota_exhausted', retryAfterMs: 1000, held: true }, '0.5 + 0.6 held: come back once they settle');
    // a cost 0.05 in place of its 0.3: 0.55 spent, b's 0.3 held
    t.strictSame(await s.settle(record({ request_id: a.admission.requestId, time: T0 + 30, cost: 0.05 }), a.admission, lim), { recorded: true });
    const c = await s.admit(admitReq(lim, T0 + 40, { estimatedCost: 0.5 }));
    if (!c.ok) return t.fail('admit c: 0.85 of 1, an estimate larger than what is left still gets in');
    t.equal((await s.admit(admitReq(lim, T0 + 50, { estimatedCost: 0.01 }))).ok, false, '0.55 + 0.8 held');
    await s.release(c.admission);
    await s.release(c.admission); // once only
    t.equal((await s.admit(admitReq(lim, T0 + 60))).ok, true, 'release gave c\'s hold back');
    await s.settle(record({ request_id: b.admission.requestId, time: T0 + 70, cost: 0.4 }), b.admission, lim);
    await s.settle(record({ request_id: c.admission.requestId, time: T0 + 80, cost: 0.05 }), c.admission, lim);
    t.strictSame(await s.admit(admitReq(lim, T0 + 90)), { ok: false, reason: 'quota_exhausted' }, '1.0 spent: c released, then settled');
    t.equal((await s.keyUsage('k1', { days: 1, now: T0 })).total.cost, 1, 'actual costs count, holds do not');
  });

  t.test('holds: the 5h/1d/7d windows count them too; a hold lapses after 15 minutes', async (t) => {
    const s = await open(t, make);
    const lim = { usd_5h: 1, usd_1d: 2 };
    await s.settle(record({ time: T0, cost: 0.9 }), undefined, lim);
    const a = await s.admit(admitReq(lim, T0 + MIN, { estimatedCost: 0.2 }));
    if (!a.ok) return t.fail('admit');
    t.strictSame(await s.admit(admitReq(lim, T0 + MIN)), { ok: false, reason: 'window_exhausted', retryAfterMs: 1000, window: '5h', held: true });
    t.equal((await s.admit(admitReq({ usd_1d: 2 }, T0 + MIN))).ok, true, '1.1 of the 1d window');
    t.equal((await s.admit(admitReq({ rpm: 100 }, T0 + MIN))).ok, true, 'no USD limit: holds do not matter');
    // Once a window ended, only what is in flight counts in it.
    await s.settle(record({ key_id: 'k2', time: T0, cost: 0.9 }), undefined, lim);
    t.equal((await s.admit(admitReq({ usd_5h: 0.1 }, T0 + 5 * HOUR, { keyId: 'k2', estimatedCost: 0.1 }))).ok, true, 'a new window');
    t.strictSame(await s.admit(admitReq({ usd_5h: 0.1 }, T0 + 5 * HOUR, { keyId: 'k2' })),
      { ok: false, reason: 'window_exhausted', retryAfterMs: 1000, window: '5h', held: true });
    await s.settle(record({ time: T0 + 2 * MIN, cost: 0.1 }), undefined, lim);
    // An exhausted window (1.0 of 1) outlasts one reached only with holds: its reset is the wait reported.
    t.strictSame(await s.admit(admitReq({ usd_5h: 1, usd_1d: 1.1 }, T0 + 2 * MIN)), { ok: false, reason: 'window_exhausted', retryAfterMs: 5 * HOUR - 2 * MIN, window: '5h' });
    // a's process died: its hold lapses 15 minutes after its admission minute.
    const lapse = await s.admit(admitReq({ quota_usd: 1.2 }, T0 + 15 * MIN + 59_999));
    t.equal(lapse.ok, false, '1.0 spent + 0.2 held, 14 minutes on');
    const after = await s.admit(admitReq({ quota_usd: 1.2 }, T0 + 16 * MIN, { estimatedCost: 0.15 }));
    t.equal(after.ok, true, 'lapsed at 15 minutes');
    if (!after.ok) return;
    t.equal((await s.admit(admitReq({ quota_usd: 1.2 }, T0 + 16 * MIN))).ok, true, '1.15 of 1.2');
    await s.settle(record({ request_id: a.admission.requestId, time: T0 + 17 * MIN, cost: 0.05 }), a.admission, lim);
    t.equal((await s.admit(admitReq({ quota_usd: 1.2 }, T0 + 17 * MIN))).ok, false, 'a settles late: its cost counts, nothing is given back twice (1.05 + 0.15 held)');
    await s.release(after.admission);
    t.equal((await s.admit(admitReq({ quota_usd: 1.2 }, T0 + 17 * MIN))).ok, true, '1.05 spent, nothing held');
  });

  t.test('holds: what an estimate holds is bounded, nonsense holds nothing', async (t) => {
    const s = await open(t, make);
    const lim = { quota_usd: 1e9 };
    const huge = await s.admit(admitReq(lim, T0, { estimatedCost: Infinity }));
    t.ok(huge.ok && huge.admission.estimatedCost === 1e6, 'an endless estimate holds a million USD');
    for (const estimatedCost of [NaN, -5, 0, undefined]) {
      const r = await s.admit(admitReq(lim, T0, { estimatedCost }));
      t.ok(r.ok && r.admission.estimatedCost === 0, `${estimatedCost}: nothing held`);
    }
    const tiny = { quota_usd: 0.000000003 };
    const odd = await s.admit(admitReq(tiny, T0, { keyId: 'k2', estimatedCost: 0.0000000014 }));
    t.ok(odd.ok && odd.admission.estimatedCost === 0.000000001, 'held to the nano-dollar');
    t.equal((await s.admit(admitReq(tiny, T0, { keyId: 'k2', estimatedCost: 1 }))).ok, true, '1 of 3 nano held');
    t.equal((await s.admit(admitReq(tiny, T0, { keyId: 'k2' }))).ok, false, 'and then 1e9 + 1');
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
