// plugins/proxy/relay.ts when the client leaves mid-stream: the usage and text observed so far are on ctx the moment the
// relay resolves (when metering settles), whenever the upstream's own close arrives, and the ending stays 'disconnected'.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import t from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { relay } from '../../plugins/proxy/relay.ts';
import type { Ctx, StreamedText } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';

/**
 * An upstream response whose close comes a loop turn after destroy() and without 'aborted' (as from a socket that is
 * torn down asynchronously, or a client that no longer emits the deprecated event): nothing may depend on it arriving first.
 */
class SlowClosingUpstream extends PassThrough {
  statusCode = 200;
  headers = { 'content-type': 'text/event-stream' };
  complete = false;
  override _destroy(err: Error | null, callback: (err: Error | null) => void): void {
    setImmediate(() => callback(err));
  }
}

const frame = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const delta = (text: string) => frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });

interface Seen { usage?: Usage; streamed?: StreamedText; outcome?: string }

t.test('the client leaves mid-stream: observed usage is on ctx when the relay resolves, and stays so after the upstream closes', async (t) => {
  let settle!: (v: { atResolve: Seen; ctx: Ctx; upstream: SlowClosingUpstream }) => void;
  const result = new Promise<{ atResolve: Seen; ctx: Ctx; upstream: SlowClosingUpstream }>((resolve) => { settle = resolve; });
  const server = createServer((_req, res) => {
    const ctx = { id: 'relay-1', res, format: anthropicMessages, get: () => undefined, stream: true, timings: { start: 0 } } as unknown as Ctx;
    const upstream = new SlowClosingUpstream();
    // What metering reads when it settles: a snapshot taken as soon as the relay's promise resolves.
    relay(ctx, upstream as never, 0).then(() => settle({ atResolve: { usage: ctx.usage, streamed: ctx.streamed, outcome: ctx.outcome }, ctx, upstream }));
    upstream.write(frame('message_start', { message: { id: 'm1', model: 'claude-haiku-4-5', usage: { input_tokens: 17, output_tokens: 1 } } }));
    upstream.write(frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    upstream.write(delta('Echo'));
    upstream.write(delta(':'));
    upstream.write(delta(' Hello')); // the rest never comes: the client leaves first
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.closeAllConnections(); server.close(); });

  const controller = new AbortController();
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: controller.signal });
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(' Hello')) text += new TextDecoder().decode((await reader.read()).value);
  controller.abort();
  await reader.cancel().catch(() => {});

  const { atResolve, ctx, upstream } = await result;
  t.equal(atResolve.outcome, 'disconnected');
  t.strictSame(atResolve.usage, { input: 17, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 }, 'message_start\'s prompt count, already on ctx');
  t.strictSame(atResolve.streamed, { chars: 11, outputFinal: false }, '"Echo: Hello" relayed, the output not yet counted');
  t.ok(upstream.destroyed, 'the upstream was cancelled');
  await new Promise((resolve) => upstream.once('close', resolve));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(ctx.outcome, 'disconnected', 'the upstream\'s late close did not turn it into another ending');
  t.strictSame(ctx.usage, atResolve.usage, 'nor change the usage');
});
