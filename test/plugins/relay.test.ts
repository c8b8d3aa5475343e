// plugins/proxy/relay.ts when the client leaves mid-stream: the usage and text observed so far are on ctx the moment the
// relay resolves (when metering settles), whenever the upstream's own close arrives, and the ending stays 'disconnected'.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { openaiEmbeddings } from '../../adapters/openai-embeddings/index.ts';
import { relay } from '../../plugins/proxy/relay.ts';
import { UpstreamResponse } from '../../plugins/proxy/upstream-response.ts';
import type { Ctx, StreamedText } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { endingCtx } from '../helpers/stage-ctx.ts';

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
    const ctx = endingCtx({ id: 'relay-1', res, format: anthropicMessages, get: () => undefined, stream: true, timings: { start: 0 } });
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

/**
 * A whole JSON answer arriving as an upstream response, for relay() to read and send: the gateway's UpstreamResponse,
 * given its headers and bytes through the handler undici calls. `streamed`: read as a stream as well (a response
 * pinned by its id is), so relay() reads it through the stream's events instead of whole().
 */
class WholeUpstream extends UpstreamResponse {
  readonly #h = this.handler(() => {}, () => {});
  constructor(streamed = false) {
    super();
    this.#h.onHeaders!(200, [Buffer.from('Content-Type'), Buffer.from('application/json')], () => {}, '');
    if (streamed) this.on('data', () => {});
  }
  write(text: string): void { this.#h.onData!(Buffer.from(text)); }
  end(text = ''): void {
    if (text) this.write(text);
    this.#h.onComplete!([]);
  }
}

const completion = JSON.stringify({
  id: 'chatcmpl-relay', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

/** Serves one request by relaying `feed`'s upstream; resolves with what the relay left on ctx and the listener counts. */
async function relayWhole(t: Test, feed: (upstream: WholeUpstream) => void, extra: Partial<Ctx> = {}, streamed = false) {
  type Outcome = { ctx: Ctx; endListeners: number; before: number; err?: { code?: string }; upstream: WholeUpstream };
  let settle!: (v: Outcome) => void;
  const done = new Promise<Outcome>((resolve) => { settle = resolve; });
  const server = createServer((_req, res) => {
    const ctx = endingCtx({ id: 'relay-2', res, format: openaiChat, get: () => undefined, stream: false, timings: { start: performance.now() }, ...extra });
    const upstream = new WholeUpstream(streamed);
    const before = upstream.listenerCount('end');
    const relayed = relay(ctx, upstream as never, 0);
    const endListeners = upstream.listenerCount('end');
    feed(upstream);
    relayed.then(() => settle({ ctx, endListeners, before, upstream }), (err: { code?: string }) => {
      // What the gateway does with the relay's refusal: an error answer (core/server.ts), here a bare 502.
      res.writeHead(502).end();
      settle({ ctx, endListeners, before, err, upstream });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`).catch(() => undefined);
  const body = res ? await res.text().catch(() => '') : '';
  return { res, body, ...(await done) };
}

for (const streamed of [false, true]) {
  const how = streamed ? ', read as a stream too (a pinned response): through its events' : ': taken whole, no stream read';
  t.test(`a whole answer${how}: sent once its upstream response has ended, its usage read, and no listener of ours on its end`, async (t) => {
    const { res, body, ctx, endListeners, before, upstream } = await relayWhole(t, (upstream) => {
      upstream.write(completion.slice(0, 40));
      setImmediate(() => upstream.end(completion.slice(40)));
    }, {}, streamed);
    t.equal(upstream.readableFlowing, streamed ? true : null, streamed ? 'read as a stream' : 'never read as a stream');
    t.equal(res?.status, 200);
    t.equal(body, completion, 'the answer, whole, in both its chunks');
    t.equal(res?.headers.get('content-length'), String(Buffer.byteLength(completion)));
    t.strictSame(ctx.usage, { input: 5, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 });
    t.equal(ctx.outcome, 'completed');
    t.type(ctx.timings.upstreamEnd, 'number', 'the upstream\'s end is timed');
    // Node's own client puts a listener on a response's 'end': a second one would make a listener array per request
    // (kept in the old generation once V8 pretenures it, and with it the request, past every minor GC).
    t.equal(endListeners, before, 'relay() listens for the answer\'s close, not its end');
  });

  t.test(`a whole answer cut short${how}: the client gets a 502, not a partial body`, async (t) => {
    const { res, body, ctx, err } = await relayWhole(t, (upstream) => {
      upstream.write(completion.slice(0, 40));
      setImmediate(() => upstream.destroy());
    }, {}, streamed);
    t.equal(err?.code, 'upstream_truncated', 'the relay refuses the cut answer');
    t.equal(res?.status, 502);
    t.notOk(body.includes('chatcmpl-relay'), 'nothing of the partial answer');
    t.equal(ctx.outcome, 'failed');
    t.equal(ctx.endedBy, 'upstream');
  });
}

t.test('a whole embeddings answer: only its usage is parsed (the numbers are stepped over), the bytes relayed as they came', async (t) => {
  // A number JSON.parse would refuse sits among the vectors: were the whole answer parsed, no usage would be read.
  const vectors = Array.from({ length: 1536 }, (_, i) => (Math.sin(i) / 7).toFixed(8)).join(',');
  const answer = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[${vectors},1.2.3]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":8,"total_tokens":8}}`;
  const { res, body, ctx } = await relayWhole(t, (upstream) => upstream.end(answer), { format: openaiEmbeddings });
  t.equal(res?.status, 200);
  t.equal(body, answer, 'relayed byte for byte');
  t.strictSame(ctx.usage, { input: 8, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
  // A model the client named differently is written back into the answer: that needs the whole of it, parsed.
  const good = answer.replace(',1.2.3]', ']');
  const aliased = await relayWhole(t, (upstream) => upstream.end(good), { format: openaiEmbeddings, model: 'embed-alias', upstreamModel: 'text-embedding-3-small' } as Partial<Ctx>);
  t.equal(JSON.parse(aliased.body).model, 'embed-alias', 'the client\'s model name written back');
  t.strictSame(aliased.ctx.usage, { input: 8, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
});
