// How a relay ends, for every kind of answer: once the client response ended, or the client left first (a stream read
// on for its usage ends later), and whether the upstream itself ended whole.
import type { Ctx } from '../../core/types.ts';
import type { UpstreamResponse } from './upstream-response.ts';

/** What a relay does when its client leaves first: true when it reads the upstream on, and calls `ended` once that read ends. */
export interface Leaving { leave(ended: () => void): boolean }

/**
 * One relay's end: `done` resolves when the client response has ended, or the client went away (and a stream read on
 * for its usage has ended too); `fail` rejects it while nothing has reached the client.
 */
export class RelayEnding {
  readonly done: Promise<void>;
  readonly fail: (err: unknown) => void;
  /** Set by the stream relays: what the client leaving first hands the upstream to. */
  leaving: Leaving | undefined = undefined;

  constructor(ctx: Ctx, upstream: UpstreamResponse) {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.done = promise;
    this.fail = reject;
    const { res } = ctx;
    res.once('close', () => {
      // A JSON-array stream cut upstream is cut to the client too (relayTee): that close is not the client leaving.
      if (!res.writableFinished && ctx.end('disconnected')) {
        if (this.leaving?.leave(resolve)) return;
        upstream.destroy();
      }
      resolve();
    });
  }
}

/**
 * On the upstream response's 'close': whether it ended whole (read to its end, not cut), timing that end if so. The
 * relays listen for 'close' rather than 'end' (attempt.ts ENDINGS).
 */
export function upstreamEnded(ctx: Ctx, upstream: UpstreamResponse): boolean {
  if (!upstream.readableEnded) return false;
  ctx.timings.upstreamEnd = performance.now();
  return true;
}
