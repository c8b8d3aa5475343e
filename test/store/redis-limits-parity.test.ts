// The limit and ledger rules in their two runtimes: the memory and file stores (rules/limits.ts, rules/ledger.ts) and
// Redis and a Redis Cluster (lua/admit.lua, settle.lua, release.lua, heartbeat.lua, log-key.lua), driven by the same
// random sequences of admissions, settlements (repeats, and records never admitted, too), releases, heartbeats and
// passing time (leases and rpm entries expire, holds lapse, spend windows end), give the same answers, and after each
// round the same usage, records and overview. Calls of one step go together, so Redis runs its list forms too.
import t from 'tap';
import type { Admission, AdmitResult, KeyLimits, Store, UsageRecord } from '../../core/store/types.ts';
import { record } from './fixtures.ts';
import { parityStores } from './parity-stores.ts';
import { seeded } from '../helpers/random.ts';

/** What an admission answers, as every store must give it. */
const answer = (r: AdmitResult) => (r.ok
  ? { ok: true, lease: r.admission.lease, minute: r.admission.minute, tokens: r.admission.estimatedTokens, cost: r.admission.estimatedCost }
  : r);

/** What a key's ledger shows after a round: usage (windows, totals, days, models, rate), its records, the overview. */
async function ledgerOf(s: Store, keyId: string, now: number) {
  const usage = await s.keyUsage(keyId, { days: 2, now });
  const { records } = await s.records({ key: keyId, limit: 1000 });
  const buckets = await s.usageBuckets('hour', now - 3 * 3_600_000, now);
  return {
    usage, records: records.map((r) => r.request_id),
    overview: buckets.map((b) => ({ start: b.start, usage: b.usage.filter((u) => u.key === keyId) })),
  };
}

t.test('random sequences: memory, file, Redis and Cluster admit, refuse, settle and count alike', async (t) => {
  const named = await parityStores(t, 'limits-parity');
  const stores = named.map((n) => n.store);
  t.comment(`stores: ${named.map((n) => n.name).join(', ')}`);
  /** Every store's answers against the memory store's (the first). */
  let history: string[] = [];
  const same = (got: unknown[], what: string) => {
    for (let i = 1; i < got.length; i++) {
      if (!t.strictSame(got[i], got[0], `${named[i].name}: ${what}`)) t.comment(`the round so far:\n${history.join('\n')}`);
    }
  };
  let steps = 0;
  const seen = new Map<string, number>();
  const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);
  for (let round = 1; round <= 40; round++) {
    const rand = seeded(round);
    const int = (n: number) => Math.floor(rand() * n);
    const maybe = <X>(x: X): X | undefined => (rand() < 0.5 ? x : undefined);
    const keyId = `k${round}`;
    const limits: KeyLimits = {
      rpm: maybe(2 + int(12)), tpm: maybe(100 + int(800)), concurrency: maybe(1 + int(5)),
      quota_usd: maybe(0.1 + int(10) / 20), usd_5h: maybe(0.05 + int(5) / 20), usd_1d: maybe(0.1 + int(10) / 20),
    };
    // Real time less a few minutes, then only forward: a settlement counts as recent in every store (no look into the
    // log), and Redis's own key lives (real time) outlast the round.
    let now = Math.floor(Date.now() / 60_000) * 60_000 - 4 * 60_000;
    const pending: Admission[] = [];
    /** Settled (or released) admissions and the record a settlement sent again repeats (undefined: none yet). */
    const settled: { adm: Admission; rec?: UsageRecord }[] = [];
    let n = 0;
    history = [`limits ${JSON.stringify(limits)}`];
    for (let step = 0; step < 40; step++, steps++) {
      const op = int(20);
      const at = `round ${round} step ${step}`;
      if (op < 10) {
        // One to three admissions at once.
        const reqs = Array.from({ length: 1 + int(3) }, () => ({
          keyId, requestId: `r${round}-${++n}`, now, limits, estimatedTokens: int(120), leaseMs: 5_000 + int(20_000),
          estimatedCost: rand() < 0.5 ? 0 : int(30) / 1000,
        }));
        const got = await Promise.all(stores.map((s) => Promise.all(reqs.map((r) => s.admit(r)))));
        history.push(`${now} admit ${reqs.map((r) => `${r.requestId} est ${r.estimatedTokens} lease ${r.leaseMs} cost ${r.estimatedCost}`).join(', ')}: ${JSON.stringify(got[0].map(answer))}`);
        same(got.map((a) => a.map(answer)), `${at}: admissions`);
        for (const r of got[0]) {
          if (r.ok) pending.push(r.admission);
          count(r.ok ? 'admitted' : `${r.reason}${r.held ? ' (held)' : ''}`);
        }
      } else if (op < 15 && (pending.length || op === 14)) {
        // Settle one or two: one pending (or a request never admitted), sometimes one settled before, sent again as it
        // was (a repeat carries the same record), or settled at last after its release.
        const take: { adm?: Admission; rec?: UsageRecord }[] = op === 14 ? [{}] : [{ adm: pending.splice(int(pending.length), 1)[0] }];
        if (settled.length && rand() < 0.3) take.push(settled[int(settled.length)]);
        const recs = take.map(({ adm, rec }) => rec ?? record({
          key_id: keyId, request_id: adm?.requestId ?? `never-${round}-${++n}`, time: now, input_tokens: int(150),
          output_tokens: int(50), cost: int(40) / 1000, model: rand() < 0.7 ? 'm1' : 'm2', duration_ms: int(900),
        }));
        const got = await Promise.all(stores.map((s) => Promise.all(take.map(({ adm }, i) => s.settle(recs[i], adm, limits)))));
        history.push(`${now} settle ${recs.map((r) => r.request_id).join(', ')}: ${JSON.stringify(got[0])}`);
        same(got, `${at}: settlements`);
        for (const r of got[0]) count(r.recorded ? 'recorded' : 'repeat');
        take.forEach((x, i) => {
          if (!x.adm || x.rec) return;
          // One settled after its release is in `settled` already: it now has its record.
          if (!settled.some((y) => y === x)) settled.push({ adm: x.adm });
          settled.find((y) => y.adm === x.adm)!.rec = recs[i];
        });
      } else if (op < 17 && pending.length) {
        const adm = pending[int(pending.length)];
        // A release (sometimes twice), and sometimes its settlement after all (the client left, the usage came anyway).
        await Promise.all(stores.map((s) => s.release(adm)));
        if (rand() < 0.2) await Promise.all(stores.map((s) => s.release(adm)));
        history.push(`${now} release ${adm.requestId}`);
        count('released');
        if (rand() < 0.5) {
          pending.splice(pending.indexOf(adm), 1);
          settled.push({ adm });
        }
      } else if (op < 19 && pending.length) {
        const adm = pending[int(pending.length)];
        const leaseMs = 10_000 + int(20_000);
        await Promise.all(stores.map((s) => s.heartbeat(adm, leaseMs, now)));
        history.push(`${now} heartbeat ${adm.requestId} ${leaseMs}`);
        count('heartbeat');
      }
      // Mostly seconds; now and then past a minute's tpm bucket, the rpm window and leases, a hold's life, a 5 h window.
      const jump = int(40);
      now += jump === 0 ? 5 * 3_600_000 + int(60_000) : jump < 3 ? 16 * 60_000 : jump < 10 ? int(40_000) : int(3_000);
      if (jump < 3) count(jump === 0 ? '5 h passed' : '16 min passed');
    }
    same(await Promise.all(stores.map((s) => ledgerOf(s, keyId, now))), `round ${round}: usage, records and overview`);
  }
  // Every limit refused some, by what was spent and by what requests in flight held, and many were admitted.
  const summary = JSON.stringify(Object.fromEntries(seen));
  for (const what of [
    'concurrency', 'rpm', 'tpm', 'quota_exhausted', 'quota_exhausted (held)', 'window_exhausted', 'window_exhausted (held)',
    'recorded', 'repeat', 'released', 'heartbeat', '16 min passed', '5 h passed',
  ]) {
    t.ok((seen.get(what) ?? 0) > 0, `${steps} steps: ${what} (${summary})`);
  }
  t.ok((seen.get('admitted') ?? 0) > 400, `many admitted (${summary})`);
});
