// rate-limit's admission handle, as later stages see it: sent once however often it is asked for; what was reserved goes
// back once, with the settlement (metering) or else released at the request's end; a refusal ends the request
// rejected; and no accessor of its own (a getter in a per-request object literal kept every request alive past minor
// GCs: plugins/rate-limit.ts, class Admitting).
import t from 'tap';
import { rateLimit } from '../../plugins/rate-limit.ts';
import { ADMISSION } from '../../plugins/vars.ts';
import type { Env } from '../../core/types.ts';
import type { Admission, AdmitRequest, AdmitResult, UsageRecord } from '../../core/store/types.ts';
import { endingCtx, runStage } from '../helpers/stage-ctx.ts';

function harness(answer: (req: AdmitRequest) => AdmitResult) {
  const asked: AdmitRequest[] = [];
  const released: Admission[] = [];
  const settled: (Admission | undefined)[] = [];
  const store = {
    admit: async (req: AdmitRequest) => { asked.push(req); return answer(req); },
    release: async (a: Admission) => { released.push(a); },
    settle: async (_r: UsageRecord, a: Admission | undefined) => { settled.push(a); return { recorded: true }; },
    heartbeat: async () => {},
  };
  const env = { store } as unknown as Env;
  // proxy takes the admission: the stage only hands it on.
  const stage = rateLimit.create({ lease_ms: 60_000, heartbeat_ms: 20_000, output_fields: [], bytes_per_token: 4, limits: ['rpm'] }, env, { laterTakes: () => true });
  const vars = new Map<string, unknown>();
  const ctx = endingCtx({
    id: 'req-1', key: { id: 'k1', limits: { rpm: 10 } },
    get: (v: { name: string }) => vars.get(v.name), set: (v: { name: string }, value: unknown) => vars.set(v.name, value),
    log: { warn: () => {}, error: () => {} },
  });
  return { asked, released, settled, stage, ctx };
}

const admission: Admission = { keyId: 'k1', requestId: 'req-1', minute: 1, estimatedTokens: 0, estimatedCost: 0, lease: false };
const record = { request_id: 'req-1' } as UsageRecord;

t.test('the handle is sent once, however often a later stage asks; unsettled, the reservation goes back at the end', async (t) => {
  const h = harness(() => ({ ok: true, admission }));
  await runStage(h.stage, h.ctx, async () => {
    const handle = h.ctx.get(ADMISSION)!;
    const first = handle.send();
    t.equal(handle.send(), first, 'a second ask gets the same promise');
    await first;
    t.equal(h.asked.length, 1);
    t.equal(h.asked[0].requestId, 'req-1');
    t.type(h.asked[0].now, 'number');
    for (const name of Object.getOwnPropertyNames(handle)) {
      const d = Object.getOwnPropertyDescriptor(handle, name)!;
      t.ok(!d.get && !d.set, `${name}: a plain field, not an accessor`);
    }
    t.strictSame(h.released, [], 'held while the request runs');
  });
  t.strictSame(h.released, [admission], 'not settled (no metering here): the stage hands the reservation back at the end');
});

t.test('a settled handle is not released again; a refusal ends the request rejected and reaches the caller', async (t) => {
  const ok = harness(() => ({ ok: true, admission }));
  await runStage(ok.stage, ok.ctx, async () => {
    const handle = ok.ctx.get(ADMISSION)!;
    await handle.send();
    await handle.settle(record, {});
  });
  t.strictSame(ok.settled, [admission], 'the settlement took what was reserved');
  t.strictSame(ok.released, [], 'and nothing is released after it');

  const twice = harness(() => ({ ok: true, admission }));
  await runStage(twice.stage, twice.ctx, async () => {
    const handle = twice.ctx.get(ADMISSION)!;
    await handle.send();
    await handle.settle(record, {});
    await handle.settle(record, {});
  });
  t.strictSame(twice.settled, [admission, undefined], 'a second settlement carries no reservation: it went back once');

  const no = harness(() => ({ ok: false, reason: 'rpm', retryAfterMs: 1000 }));
  const err = await runStage(no.stage, no.ctx, async () => { await no.ctx.get(ADMISSION)!.send(); }).then(() => undefined, (e: unknown) => e);
  t.equal((err as { status?: number } | undefined)?.status, 429, 'the refusal reaches the caller');
  t.equal(no.ctx.outcome, 'rejected');
  t.strictSame(no.released, [], 'nothing reserved, nothing to give back');
});
