// scratchCtx (core/context.ts): a throwaway reader's view of a request's context, a copy with variables of its own.
import t from 'tap';
import { PassThrough } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import { createCtx, keepScratch, scratchCtx } from '../../core/context.ts';
import { contextVar } from '../../core/vars.ts';
import type { Ctx, FormatAdapter, RouteConfig } from '../../core/types.ts';

const position = contextVar<number>('test.position');
const id = contextVar<string>('test.id');

function requestCtx(body: string) {
  const stream = new PassThrough();
  const req = Object.assign(stream, { headers: { 'content-length': String(Buffer.byteLength(body)) } }) as unknown as IncomingMessage;
  stream.end(body);
  return createCtx({
    id: 'req-1', clientRequestId: 'client-1', req, res: {} as ServerResponse, route: {} as RouteConfig, format: {} as FormatAdapter,
    path: '/v1/chat/completions', search: '?a=1', params: {}, log: pino({ level: 'silent' }), bodyLimit: 1024, start: 5,
  });
}

t.test('a scratch copy reads the request as it is, keeps what it sets to itself, and is no object made from the context', async (t) => {
  const ctx = requestCtx('{"model":"m"}');
  ctx.model = 'm';
  ctx.upstreamModel = 'u';
  ctx.stream = true;
  ctx.set(position, 1);
  ctx.set(id, 'kept');
  const scratch = scratchCtx(ctx);
  for (const field of Object.keys(ctx) as (keyof Ctx)[]) t.equal(scratch[field], ctx[field], `${String(field)} as the request's`);
  t.equal(scratch.timings, ctx.timings, 'the same timings');
  t.equal(scratch.url.href, 'http://gateway/v1/chat/completions?a=1');
  t.equal(scratch.get(position), 1, "the request's variables, until it sets its own");
  scratch.set(position, 2);
  scratch.set(id, undefined);
  t.equal(scratch.get(position), 2);
  t.equal(scratch.get(id), undefined, 'set to nothing: its own nothing, not the request\'s value');
  t.equal(ctx.get(position), 1, 'the request keeps its own');
  t.equal(ctx.get(id), 'kept');
  scratch.model = 'changed';
  t.equal(ctx.model, 'm', 'a field it sets is its own too');
  t.strictSame(await scratch.json(), { model: 'm' }, 'the same body');
  t.strictSame(await ctx.json(), { model: 'm' }, 'read once, by either');
  // Not made with the context as its prototype (which gives the context a map of its own: megamorphic readers).
  t.equal(Object.getPrototypeOf(scratch), Object.getPrototypeOf(ctx), 'an object of the same class');
  t.notOk(Object.prototype.isPrototypeOf.call(ctx, scratch), 'the context is not its prototype');
});

t.test('a context made some other way (a test\'s literal) gets the same view by prototype', async (t) => {
  const vars = new Map<string, unknown>([['test.position', 7]]);
  const fake = { model: 'm', get: (v: { name: string }) => vars.get(v.name), set: (v: { name: string }, x: unknown) => { vars.set(v.name, x); } };
  const scratch = scratchCtx(fake as never);
  t.equal(scratch.model, 'm');
  t.equal(scratch.get(position), 7);
  scratch.set(position, 8);
  t.equal(scratch.get(position), 8);
  t.equal(vars.get('test.position'), 7, 'the literal keeps its own');
});

t.test("a scratch copy's end hooks are its request's: they run when the request ends", async (t) => {
  const ctx = requestCtx('{}');
  const ran: string[] = [];
  ctx.onEnd(() => { ran.push('request'); });
  scratchCtx(ctx).onEnd(() => { ran.push('scratch'); });
  t.strictSame(ran, [], 'none before the end');
  await ctx.ended(ctx, undefined);
  t.strictSame(ran, ['scratch', 'request'], 'both, the last registered first');
  await ctx.ended(ctx, undefined);
  t.equal(ran.length, 2, 'once');
});

t.test('kept (keepScratch): what a scratch copy set becomes its request\'s; what it did not set stays as it was', async (t) => {
  const ctx = requestCtx('{}');
  ctx.set(id, 'request');
  const scratch = scratchCtx(ctx);
  scratch.set(position, 2);
  t.equal(ctx.get(position), undefined, 'not before it is kept');
  keepScratch(scratch);
  t.equal(ctx.get(position), 2, 'its variable is the request\'s');
  t.equal(ctx.get(id), 'request', 'one it never set keeps the request\'s value');
  // The literal kind (a test's context) too, and the value itself, not a copy: a scanner goes on updating it.
  const vars = new Map<string, unknown>();
  const fake = { get: (v: { name: string }) => vars.get(v.name), set: (v: { name: string }, x: unknown) => { vars.set(v.name, x); } };
  const other = scratchCtx(fake as never);
  const at = { sequence: 1 };
  other.set(contextVar<object>('test.at'), at);
  t.equal(vars.size, 0);
  keepScratch(other);
  t.equal(vars.get('test.at'), at, 'the same object');
});
