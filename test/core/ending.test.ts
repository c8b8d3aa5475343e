// core/ending.ts: which ending stands when a request's ending is said more than once, and the end hooks.
import t from 'tap';
import { ENDINGS, RequestEnd, stands } from '../../core/ending.ts';
import type { Ctx, Outcome } from '../../core/types.ts';

const ALL = Object.keys(ENDINGS) as Outcome[];
const CUTS: Outcome[] = ['disconnected', 'missing-terminal', 'timeout'];
const ANSWERS: Outcome[] = ['completed', 'incomplete', 'failed'];

t.test('the first ending said stands, except that a cut of the exchange outranks the answer it cut', async (t) => {
  for (const next of ALL) t.ok(stands(undefined, next), `${next} stands when nothing was said`);
  for (const current of ALL) {
    for (const next of ALL) {
      if (next === current) continue;
      const want = ANSWERS.includes(current) && CUTS.includes(next);
      t.equal(stands(current, next), want, `${next} after ${current}: ${want ? 'replaces it' : 'does not'}`);
    }
  }
});

t.test('end(): true when the ending stands or was said already; who ended it goes with the ending that stands', async (t) => {
  const e = new RequestEnd();
  t.equal(e.end('completed'), true);
  t.equal(e.end('failed', 'upstream'), false, 'a second answer does not replace the first');
  t.equal(e.endedBy, undefined, 'nor says who ended it');
  t.equal(e.end('disconnected', 'client'), true, 'the client leaving outranks the answer');
  t.strictSame([e.outcome, e.endedBy], ['disconnected', 'client']);
  t.equal(e.end('disconnected'), true, 'said again: it stands');
  t.equal(e.end('missing-terminal'), false, 'one cut does not replace another');
  const refused = new RequestEnd();
  refused.end('rejected');
  for (const next of ALL) if (next !== 'rejected') t.equal(refused.end(next), false, `a refusal stays a refusal (${next})`);
  t.equal(refused.outcome, 'rejected');
});

t.test('end hooks: the last registered runs first, each once; one that fails is logged and the rest still run', async (t) => {
  const logged: unknown[] = [];
  const ctx = { id: 'r', log: { error: (o: unknown) => logged.push(o) } } as unknown as Ctx;
  const e = new RequestEnd();
  const ran: string[] = [];
  e.onEnd(async () => { ran.push('first'); });
  e.onEnd(() => { throw new Error('boom'); });
  e.onEnd(async (_ctx, thrown) => { ran.push(`last:${thrown?.code}`); });
  await e.ended(ctx, { code: 'x' } as never);
  t.strictSame(ran, ['last:x', 'first']);
  t.equal(logged.length, 1, 'the failing hook is logged');
  await e.ended(ctx, undefined);
  t.equal(ran.length, 2, 'hooks run once');
});
