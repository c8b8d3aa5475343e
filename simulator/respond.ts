// Writes successful responses, whole JSON or SSE, and is where the in-body faults (truncate, midstream-error) act.
// The simulator keeps its own tiny SSE writer instead of the gateway's adapters/shared/sse.ts on purpose:
// an upstream that shared the gateway's framing code could not catch a framing bug in it.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimContext } from './context.ts';
import { CHUNKS_BEFORE_FAULT } from './faults.ts';

export function sendJson(ctx: SimContext, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  ctx.res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  if (ctx.fault.midstream === 'truncate') {
    // Promise the full length, deliver half: the client sees a body cut short, not a clean small one.
    // Dropped once the half has reached the socket: node (24.22 on) hands a response's writes of one tick to its socket
    // later, and a socket ended at once went without them (the client saw no response at all).
    ctx.res.write(body.subarray(0, body.length >> 1), () => ctx.res.socket?.destroySoon());
    return;
  }
  ctx.res.end(body);
}

export interface StreamPlan {
  /** Complete SSE frames, each written with its own `res.write`. */
  frames: string[];
  /** Index of the first content frame; stream faults fire CHUNKS_BEFORE_FAULT frames after it. */
  firstContent: number;
  /** Index just past the last content frame, so a fault never lands on the terminal frames. */
  endContent: number;
  /** What `midstream-error` writes instead of frame `at` and the rest, in the dialect's own error shape. */
  errorFrame: (at: number) => string;
  /** Default `text/event-stream; charset=utf-8`, as OpenAI and Anthropic send it. */
  contentType?: string;
}

export function sseFrame(data: string, event?: string): string {
  return (event === undefined ? '' : `event: ${event}\n`) + `data: ${data}\n\n`;
}

export async function sendStream(ctx: SimContext, plan: StreamPlan): Promise<void> {
  const { res, signal, fault } = ctx;
  res.writeHead(200, { 'content-type': plan.contentType ?? 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const cutAt = !fault.midstream ? -1 : fault.early ? plan.firstContent : Math.min(plan.firstContent + CHUNKS_BEFORE_FAULT, plan.endContent);
  for (let i = 0; i < plan.frames.length; i++) {
    if (i === cutAt) return cut(ctx, plan.errorFrame(i));
    if (i > 0 && ctx.chunkDelayMs > 0 && !(await pause(ctx.chunkDelayMs, signal))) return;
    if (signal.aborted) return;
    if (!res.write(plan.frames[i])) {
      try {
        await once(res, 'drain', { signal });
      } catch {
        return;
      }
    }
  }
  res.end();
}

function cut(ctx: SimContext, errorFrame: string): void {
  if (ctx.fault.midstream === 'error') {
    ctx.res.end(errorFrame);
    return;
  }
  // Flush what was written, then drop the connection without the chunked terminator: on the next turn of the loop,
  // once the response's writes of this tick have reached the socket (see sendJson).
  const socket = ctx.res.socket;
  setImmediate(() => socket?.destroySoon());
}

async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
