// rate-limit's admission handle, as a later stage (proxy) sees it: sent once however often it is asked for, what was
// reserved readable once admitted, a refusal marking the request rejected; and no accessor of its own (a getter in a
// per-request object literal kept every request alive past minor GCs: plugins/rate-limit.ts, class Admitting).
import t from 'tap';
import { rateLimit } from '../../plugins/rate-limit.ts';
import { ADMISSION } from '../../plugins/vars.ts';
import type { Ctx, Env } from '../../core/types.ts';
import type { Admission, AdmitRequest, AdmitResult } from '../../core/store/types.ts';

function harness(answer: (req: AdmitRequest) => AdmitResult) {
  const asked: AdmitRequest[] = [];
  const released: Admission[] = [];
  const store = {
    admit: async (req: AdmitRequest) => { asked.push(req); return answer(req); },
    release: async (a: Admission) => { released.push(a); },
    heartbeat: async () => {},
  };
  const env = { store } as unknown as Env;
  // proxy takes the admission: the stage only hands it on.
  const stage = rateLimit.create({ lease_ms: 60_000, heartbeat_ms: 20_000, output_fields: [], bytes_per_token: 4, limits: ['rpm'] }, env, { laterTakes: () => true });
  const vars = new Map<string, unknown>();
  const ctx = {
    id: 'req-1', key: { id: 'k1', limits: { rpm: 10 } },
    get: (v: { name: string }) => vars.get(v.name), set: (v: { name: string }, value: unknown) => vars.set(v.name, value),
    log: { warn: () => {} },
  } as unknown as Ctx;
  return { asked, released, stage, ctx };
}

const admission: Admission = { keyId: 'k1', requestId: 'req-1', minute: 1, estimatedTokens: 0, estimatedCost: 0, lease: false };

t.test('the handle is sent once, however often a later stage asks; the admission is there once admitted', async (t) => {
  const h = harness(() => ({ ok: true, admission }));
  await h.stage(h.ctx, async () => {
    const handle = h.ctx.get(ADMISSION)!;
    t.equal(handle.admission, undefined, 'nothing reserved before it is sent');
    const first = handle.send();
    t.equal(handle.send(), first, 'a second ask gets the same promise');
    await first;
    t.strictSame(handle.admission, admission);
    t.equal(h.asked.length, 1);
    t.equal(h.asked[0].requestId, 'req-1');
    t.type(h.asked[0].now, 'number');
    for (const name of Object.getOwnPropertyNames(handle)) {
      const d = Object.getOwnPropertyDescriptor(handle, name)!;
      t.ok(!d.get && !d.set, `${name}: a plain field, not an accessor`);
    }
  });
  t.strictSame(h.released, [admission], 'not settled (no metering here): the stage hands the reservation back');
});

t.test('a settled handle is not released again; a refusal marks the request rejected and reaches the caller', async (t) => {
  const ok = harness(() => ({ ok: true, admission }));
  await ok.stage(ok.ctx, async () => {
    const handle = ok.ctx.get(ADMISSION)!;
    await handle.send();
    handle.settled = true;
  });
  t.strictSame(ok.released, []);

  const no = harness(() => ({ ok: false, reason: 'rpm', retryAfterMs: 1000 }));
  const err = await no.stage(no.ctx, async () => { await no.ctx.get(ADMISSION)!.send(); }).then(() => undefined, (e: unknown) => e);
  t.equal((err as { status?: number } | undefined)?.status, 429, 'the refusal reaches the caller');
  t.equal(no.ctx.outcome, 'rejected');
  t.strictSame(no.released, [], 'nothing reserved, nothing to give back');
});
