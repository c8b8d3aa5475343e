// compose: onion order, short-circuit, error propagation, next() twice, empty chain.
import t from 'tap';
import { compose } from '../../core/pipeline.ts';
import type { Ctx, Stage } from '../../core/types.ts';

const fakeCtx = () => ({ seen: {} as Record<string, unknown> }) as unknown as Ctx & { seen: Record<string, unknown> };

/** A stage that records when it enters and leaves, around next(). */
const around = (log: string[], name: string): Stage => async (_ctx, next) => {
  log.push(`${name}:before`);
  await next();
  log.push(`${name}:after`);
};

t.test('onion order: each stage runs before and after the rest of the chain', async (t) => {
  const log: string[] = [];
  const run = compose([around(log, 'a'), around(log, 'b'), async () => { log.push('core'); }, around(log, 'unreached')]);
  await run(fakeCtx());
  t.strictSame(log, ['a:before', 'b:before', 'core', 'b:after', 'a:after']);
});

t.test('the same ctx object reaches every stage, and later stages see earlier writes', async (t) => {
  const ctx = fakeCtx();
  const seen: unknown[] = [];
  const run = compose([
    async (c, next) => { (c as typeof ctx).seen.first = 1; await next(); seen.push((c as typeof ctx).seen.last); },
    async (c, next) => { seen.push(c === ctx, (c as typeof ctx).seen.first); await next(); },
    async (c) => { (c as typeof ctx).seen.last = 'z'; },
  ]);
  await run(ctx);
  t.strictSame(seen, [true, 1, 'z']);
});

t.test('async work between stages keeps the order', async (t) => {
  const log: string[] = [];
  const tick = () => new Promise((r) => setTimeout(r, 5));
  const run = compose([
    async (_c, next) => { await tick(); log.push('a1'); await next(); await tick(); log.push('a2'); },
    async (_c, next) => { log.push('b1'); await tick(); await next(); log.push('b2'); },
    async () => { await tick(); log.push('c'); },
  ]);
  await run(fakeCtx());
  t.strictSame(log, ['a1', 'b1', 'c', 'b2', 'a2']);
});

t.test('a stage that answers without calling next stops the chain', async (t) => {
  const log: string[] = [];
  const run = compose([
    around(log, 'outer'),
    async () => { log.push('answer'); },
    async () => { log.push('never'); },
  ]);
  await run(fakeCtx());
  t.strictSame(log, ['outer:before', 'answer', 'outer:after']);
});

t.test('a synchronous throw inside a stage becomes a rejection', async (t) => {
  const boom = new Error('sync boom');
  const syncThrower = ((_ctx: Ctx) => { throw boom; }) as unknown as Stage;
  const log: string[] = [];
  const run = compose([around(log, 'a'), syncThrower, around(log, 'never')]);
  let result: Promise<void> | undefined;
  t.doesNotThrow(() => { result = run(fakeCtx()); }, 'run() itself does not throw');
  await t.rejects(result!, boom);
  t.strictSame(log, ['a:before'], 'the outer stage does not reach its "after"');
});

t.test('a synchronous throw in the first stage is a rejection too', async (t) => {
  const boom = new Error('first');
  const run = compose([((() => { throw boom; }) as unknown) as Stage]);
  await t.rejects(run(fakeCtx()), boom);
});

t.test('an async error propagates through the outer stages, which may catch it', async (t) => {
  const boom = new Error('async boom');
  const log: string[] = [];
  const run = compose([
    around(log, 'outer'),
    async (_c, next) => {
      try { await next(); } catch (err) { log.push(`caught:${(err as Error).message}`); throw err; }
    },
    async () => { await new Promise((r) => setTimeout(r, 1)); throw boom; },
  ]);
  await t.rejects(run(fakeCtx()), boom);
  t.strictSame(log, ['outer:before', 'caught:async boom']);

  const recovered: string[] = [];
  const swallow = compose([
    async (_c, next) => { try { await next(); } catch { recovered.push('handled'); } },
    async () => { throw boom; },
  ]);
  await swallow(fakeCtx());
  t.strictSame(recovered, ['handled'], 'a stage that catches the error ends the chain cleanly');
});

t.test('next() called twice rejects', async (t) => {
  const calls: string[] = [];
  const run = compose([
    async (_c, next) => { await next(); await next(); },
    async () => { calls.push('inner'); },
  ]);
  await t.rejects(run(fakeCtx()), { message: 'next() called more than once' });
  t.strictSame(calls, ['inner'], 'the inner stage ran once');

  const concurrent = compose([
    async (_c, next) => { await Promise.all([next(), next()]); },
    async () => { calls.push('concurrent'); },
  ]);
  await t.rejects(concurrent(fakeCtx()), { message: 'next() called more than once' });
  t.strictSame(calls, ['inner', 'concurrent']);
});

t.test('next() from the last stage resolves (end of the chain)', async (t) => {
  const log: string[] = [];
  const run = compose([around(log, 'only')]);
  await run(fakeCtx());
  t.strictSame(log, ['only:before', 'only:after']);
});

t.test('an empty chain resolves', async (t) => {
  const run = compose([]);
  const result = await run(fakeCtx());
  t.equal(result, undefined);
});

t.test('a composed chain can be run many times independently', async (t) => {
  let count = 0;
  const run = compose([async (_c, next) => { count++; await next(); }, async () => { count += 10; }]);
  await run(fakeCtx());
  await run(fakeCtx());
  await Promise.all([run(fakeCtx()), run(fakeCtx())]);
  t.equal(count, 44);
});
