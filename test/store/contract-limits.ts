// Contract: admission limits (rpm, concurrency leases, tpm, check order); time moves only through `now`.
import { MIN, T0, admitReq, open, record, type MakeStore, type Tap } from './fixtures.ts';

export function limitsContract(t: Tap, make: MakeStore): void {
  t.test('rpm: exact sliding 60 s window', async (t) => {
    const s = await open(t, make);
    const lim = { rpm: 3 };
    for (const dt of [0, 1000, 2000]) t.equal((await s.admit(admitReq(lim, T0 + dt))).ok, true);
    t.strictSame(await s.admit(admitReq(lim, T0 + 3000)), { ok: false, reason: 'rpm', retryAfterMs: 57_000 });
    t.strictSame(await s.admit(admitReq(lim, T0 + 59_999)), { ok: false, reason: 'rpm', retryAfterMs: 1 });
    t.equal((await s.admit(admitReq(lim, T0 + 60_000))).ok, true, 'the first request left the window');
    t.strictSame(await s.admit(admitReq(lim, T0 + 60_001)), { ok: false, reason: 'rpm', retryAfterMs: 999 });
    t.equal((await s.admit(admitReq(lim, T0 + 61_000))).ok, true);
    t.equal((await s.admit(admitReq(lim, T0 + 61_000, { keyId: 'other' }))).ok, true, 'limits are per key');
    for (let i = 0; i < 20; i++) t.equal((await s.admit(admitReq({ rpm: 0 }, T0 + 61_000, { keyId: 'free' }))).ok, true);
  });

  t.test('rpm: admitting the same request id again does not count twice', async (t) => {
    const s = await open(t, make);
    const r = admitReq({ rpm: 1 }, T0, { requestId: 'same' });
    t.equal((await s.admit(r)).ok, true);
    t.equal((await s.admit({ ...r, now: T0 + 10 })).ok, true);
    t.equal((await s.admit(admitReq({ rpm: 1 }, T0 + 20))).ok, false);
  });

  t.test('rpm and concurrency: entries that expire out of admission order (processes with skewed clocks) still leave', async (t) => {
    const s = await open(t, make);
    const lim = { rpm: 2 };
    t.equal((await s.admit(admitReq(lim, T0 + 10_000))).ok, true);
    t.equal((await s.admit(admitReq(lim, T0))).ok, true, 'admitted second, with an earlier clock');
    t.strictSame(await s.admit(admitReq(lim, T0 + 59_999)), { ok: false, reason: 'rpm', retryAfterMs: 1 });
    t.equal((await s.admit(admitReq(lim, T0 + 60_000))).ok, true, 'the earlier one left the window though admitted last');
    t.equal((await s.admit(admitReq(lim, T0 + 60_001))).ok, false);
    const conc = { concurrency: 2 };
    t.equal((await s.admit(admitReq(conc, T0, { keyId: 'k2', leaseMs: 20_000 }))).ok, true);
    t.equal((await s.admit(admitReq(conc, T0, { keyId: 'k2', leaseMs: 5_000 }))).ok, true, 'a shorter lease taken second');
    t.equal((await s.admit(admitReq(conc, T0 + 4_999, { keyId: 'k2' }))).ok, false);
    t.equal((await s.admit(admitReq(conc, T0 + 5_000, { keyId: 'k2' }))).ok, true, 'the shorter lease expired first');
  });

  t.test('concurrency: leases released by settle, expired when a crashed holder stops renewing', async (t) => {
    const s = await open(t, make);
    const lim = { concurrency: 2 };
    const a = await s.admit(admitReq(lim, T0, { leaseMs: 30_000 }));
    const b = await s.admit(admitReq(lim, T0 + 1000, { leaseMs: 30_000 })); // b's process "crashes": never settles
    t.ok(a.ok && b.ok);
    if (!a.ok || !b.ok) return;
    t.equal(a.admission.lease, true);
    const full = await s.admit(admitReq(lim, T0 + 2000));
    t.equal(full.ok, false);
    if (!full.ok) {
      t.equal(full.reason, 'concurrency');
      t.ok(full.retryAfterMs! >= 1 && full.retryAfterMs! <= 1000, `retryAfterMs ${full.retryAfterMs} in [1, 1000]`);
    }
    t.strictSame(await s.settle(record({ request_id: a.admission.requestId, time: T0 + 3000 }), a.admission, lim), { recorded: true });
    const c = await s.admit(admitReq(lim, T0 + 3000, { leaseMs: 30_000 }));
    t.equal(c.ok, true, 'settle released a slot');
    if (!c.ok) return;
    t.equal((await s.admit(admitReq(lim, T0 + 4000))).ok, false);
    // c's process is alive and renews; b's lease runs out at T0 + 31 s.
    await s.heartbeat(c.admission, 30_000, T0 + 20_000);
    t.equal((await s.admit(admitReq(lim, T0 + 30_999))).ok, false, 'b still holds its lease until it expires');
    const d = await s.admit(admitReq(lim, T0 + 31_000, { leaseMs: 30_000 }));
    t.equal(d.ok, true, 'the crashed holder\'s lease expired');
    t.equal((await s.admit(admitReq(lim, T0 + 40_000))).ok, false, 'c was renewed by its heartbeat (would have expired at 33 s)');
    t.equal((await s.admit(admitReq(lim, T0 + 50_000))).ok, true, 'c expired at 50 s: its renewal ran out');
  });

  t.test('concurrency: heartbeat never revives an expired lease; release frees a slot', async (t) => {
    const s = await open(t, make);
    const lim = { concurrency: 1 };
    const a = await s.admit(admitReq(lim, T0, { leaseMs: 10_000 }));
    if (!a.ok) return t.fail('admit');
    await s.heartbeat(a.admission, 10_000, T0 + 10_000); // at expiry: too late
    const b = await s.admit(admitReq(lim, T0 + 10_001, { leaseMs: 10_000 }));
    t.equal(b.ok, true, 'the expired lease stayed expired');
    if (!b.ok) return;
    t.equal((await s.admit(admitReq(lim, T0 + 10_002))).ok, false);
    await s.release(b.admission);
    t.equal((await s.admit(admitReq(lim, T0 + 10_003))).ok, true, 'release gave the slot back');
    const unlimited = await s.admit(admitReq({}, T0));
    t.ok(unlimited.ok && !unlimited.admission.lease, 'no lease is taken without a concurrency limit');
  });

  t.test('tpm: estimates reserved, reconciled at settle, per-minute buckets', async (t) => {
    const s = await open(t, make);
    const lim = { tpm: 1000 };
    const now = T0 + 15_000;
    const a = await s.admit(admitReq(lim, now, { estimatedTokens: 600 }));
    if (!a.ok) return t.fail('admit');
    t.equal(a.admission.estimatedTokens, 600);
    t.strictSame(await s.admit(admitReq(lim, now, { estimatedTokens: 500 })), { ok: false, reason: 'tpm', retryAfterMs: 45_000 });
    // 600 reserved, 250 used: the bucket now holds 250.
    await s.settle(record({ request_id: a.admission.requestId, time: now + 1000, input_tokens: 100, output_tokens: 50, cache_read_tokens: 60, cache_write_tokens: 40, reasoning_tokens: 30 }), a.admission, lim);
    const b = await s.admit(admitReq(lim, now + 2000, { estimatedTokens: 750 }));
    t.equal(b.ok, true, '250 + 750 fits exactly');
    t.equal((await s.admit(admitReq(lim, now + 2000, { estimatedTokens: 1 }))).ok, false);
    if (!b.ok) return;
    await s.release(b.admission);
    t.equal((await s.admit(admitReq(lim, now + 3000, { estimatedTokens: 750 }))).ok, true, 'release returned the estimate');
    t.equal((await s.admit(admitReq(lim, T0 + MIN, { estimatedTokens: 1000 }))).ok, true, 'a new minute starts empty');
    t.strictSame(await s.admit(admitReq(lim, T0 + MIN, { estimatedTokens: 1001 })), { ok: false, reason: 'tpm' }, 'an estimate above the whole budget: waiting cannot help');
  });

  t.test('tpm: a settle after release counts the actual tokens in full', async (t) => {
    const s = await open(t, make);
    const lim = { tpm: 100 };
    const a = await s.admit(admitReq(lim, T0, { estimatedTokens: 50 }));
    if (!a.ok) return t.fail('admit');
    await s.release(a.admission);
    await s.release(a.admission); // twice: once only
    await s.settle(record({ request_id: a.admission.requestId, time: T0, input_tokens: 70 }), a.admission, lim);
    t.equal((await s.admit(admitReq(lim, T0, { estimatedTokens: 30 }))).ok, true, '70 + 30 = 100');
    t.equal((await s.admit(admitReq(lim, T0, { estimatedTokens: 1 }))).ok, false);
  });

  t.test('refusals reserve nothing; the check order is quota, windows, concurrency, rpm, tpm', async (t) => {
    const s = await open(t, make);
    const lim = { concurrency: 1, rpm: 2, tpm: 100 };
    const a = await s.admit(admitReq(lim, T0, { estimatedTokens: 10 }));
    if (!a.ok) return t.fail('admit');
    const refused = await s.admit(admitReq(lim, T0, { estimatedTokens: 80 }));
    t.equal(refused.ok === false && refused.reason, 'concurrency');
    await s.settle(record({ request_id: a.admission.requestId, input_tokens: 10 }), a.admission, lim);
    t.equal((await s.admit(admitReq(lim, T0, { estimatedTokens: 90 }))).ok, true, 'the refused request took neither rpm nor tokens');
    const r = await s.admit(admitReq({ rpm: 2, tpm: 100 }, T0, { estimatedTokens: 50 }));
    t.equal(r.ok === false && r.reason, 'rpm', 'rpm is checked before tpm');
    await s.settle(record({ cost: 2 }), undefined, {});
    const q = await s.admit(admitReq({ quota_usd: 1, usd_5h: 1, concurrency: 1, rpm: 2, tpm: 100 }, T0, { estimatedTokens: 50 }));
    t.strictSame(q, { ok: false, reason: 'quota_exhausted' }, 'quota first, and no retryAfterMs');
    const w = await s.admit(admitReq({ usd_5h: 1, concurrency: 1 }, T0));
    t.equal(w.ok === false && w.reason, 'window_exhausted', 'windows before concurrency');
  });
}
