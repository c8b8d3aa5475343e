// A test's own context for running one stage as core runs it: the fields it gives, the request's ending (core/ending.ts),
// and the end hooks run once the stage returned or threw, as core/server.ts does.
import { RequestEnd } from '../../core/ending.ts';
import { asGatewayError } from '../../core/errors.ts';
import type { Ctx, Next, Stage } from '../../core/types.ts';

/** A fake context with an ending of its own: `end`, `onEnd`, `outcome` and `endedBy` work as on a request's. */
export function endingCtx<T extends object>(fields: T): Ctx & T & RequestEnd {
  return Object.assign(new RequestEnd(), fields) as unknown as Ctx & T & RequestEnd;
}

/** Run `stage` around `inner` and then the end hooks, as core does (a throw no stage ended is 'rejected'); rejects with it. */
export async function runStage(stage: Stage, ctx: Ctx & RequestEnd, inner: Next = async () => {}): Promise<void> {
  let thrown: unknown;
  try { await stage(ctx, inner); } catch (err) { thrown = err; ctx.end('rejected'); }
  await ctx.ended(ctx, thrown === undefined ? undefined : asGatewayError(thrown));
  if (thrown !== undefined) throw thrown;
}
