// Every reader of an upstream response hears its ending from 'close' (with readableEnded telling a whole answer from a
// cut one), never from 'end': node's own client listens on a response's 'end', and a second listener there makes a
// listener array per request, which V8 may come to allocate in the old generation, keeping the request alive past every
// minor GC (plugins/proxy/relay.ts, relayBody). Here: the SSE relay, the JSON-array stream relay, the translated relay
// (whole and streamed), readAll and holdFirstContent each end as before (usage, outcome, the end timed) and leave the
// 'end' listener count as they found it.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { gemini } from '../../adapters/gemini/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { holdFirstContent, readAll } from '../../plugins/proxy/attempt.ts';
import { relay } from '../../plugins/proxy/relay.ts';
import { relayTranslated } from '../../plugins/proxy/translate/relay.ts';
import type { Ctx, FormatAdapter } from '../../core/types.ts';
import { endingCtx } from '../helpers/stage-ctx.ts';

/** An upstream response: a stream of its body's bytes, with the fields relays read. */
class Upstream extends PassThrough {
  statusCode = 200;
  headers: Record<string, string>;
  complete = false;
  constructor(type: string) {
    super();
    this.headers = { 'content-type': type };
  }
  /**
   * Read as a stream, always: these are the relays' stream paths (and a whole answer's when its response is read as a
   * stream too, as a pinned one is). Taking a body whole is UpstreamResponse's own (upstream-response.test.ts).
   */
  whole(): boolean { return false; }
  /** The whole body, in two chunks a loop turn apart, then its end (complete, as node's client sets it). */
  feed(body: string): void {
    this.write(body.slice(0, 30));
    setImmediate(() => { this.complete = true; this.end(body.slice(30)); });
  }
}

const ctxFor = (res: ServerResponse, format: FormatAdapter, stream: boolean): Ctx => endingCtx({
  id: 'endings-1', res, format, stream, get: () => undefined, timings: { start: performance.now() },
  log: { warn() {}, info() {}, error() {} },
});

/** One request served by `serve` (given the client response); the client's answer and what `serve` resolved with. */
async function serveOne<T>(t: Test, serve: (res: ServerResponse) => Promise<T>): Promise<{ status: number; body: string; result: T }> {
  let settle!: (v: T) => void;
  const done = new Promise<T>((resolve) => { settle = resolve; });
  const server = createServer((_req, res) => { void serve(res).then(settle); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const body = await answer.text();
  return { status: answer.status, body, result: await done };
}

/** Runs `start` on a fresh upstream, feeds it `body`; the 'end' listeners it added and what it resolved with. */
async function endListenersOf<T>(upstream: Upstream, start: () => Promise<T>, body: string): Promise<{ added: number; value: T }> {
  const before = upstream.listenerCount('end');
  const running = start();
  const added = upstream.listenerCount('end') - before;
  upstream.feed(body);
  return { added, value: await running };
}

/** `run` relays a fresh upstream (of content type `type`, fed `body`) to one client: its answer, ctx and 'end' listeners added. */
async function relayed(t: Test, o: { format: FormatAdapter; stream: boolean; type: string; body: string; run: (ctx: Ctx, upstream: Upstream) => Promise<void> }) {
  const { status, body, result } = await serveOne(t, async (res) => {
    const ctx = ctxFor(res, o.format, o.stream);
    const upstream = new Upstream(o.type);
    const { added } = await endListenersOf(upstream, () => o.run(ctx, upstream), o.body);
    return { ctx, added };
  });
  return { status, body, ...result };
}

const sse = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const anthropicStream = [
  sse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], usage: { input_tokens: 11, output_tokens: 1 } } }),
  sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello there' } }),
  sse('content_block_stop', { index: 0 }),
  sse('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }),
  sse('message_stop', {}),
].join('');
const anthropicWhole = JSON.stringify({
  id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'Hello there' }],
  stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 11, output_tokens: 4 },
});
const geminiArray = JSON.stringify([
  { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }] }, index: 0 }] },
  { candidates: [{ content: { role: 'model', parts: [{ text: ' there' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10 } },
]);

t.test('an SSE stream relayed natively: completed, usage read, the end timed, no listener of ours on its end', async (t) => {
  const { status, body, ...result } = await relayed(t, {
    format: anthropicMessages, stream: true, type: 'text/event-stream', body: anthropicStream, run: (ctx, upstream) => relay(ctx, upstream as never, 0),
  });
  t.equal(status, 200);
  t.equal(body, anthropicStream, 'every frame, as it came');
  t.equal(result.ctx.outcome, 'completed');
  t.strictSame(result.ctx.usage, { input: 11, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 });
  t.type(result.ctx.timings.upstreamEnd, 'number', 'the end is timed');
  t.equal(result.added, 0, 'no listener on its end');
});

t.test('a JSON-array stream (Gemini) relayed natively: completed, usage read at its end, no listener of ours on its end', async (t) => {
  const { status, body, ...result } = await relayed(t, {
    format: gemini, stream: true, type: 'application/json', body: geminiArray, run: (ctx, upstream) => relay(ctx, upstream as never, 0),
  });
  t.equal(status, 200);
  t.equal(body, geminiArray);
  t.equal(result.ctx.outcome, 'completed');
  t.equal(result.ctx.usage?.input, 7);
  t.equal(result.ctx.usage?.output, 3);
  t.type(result.ctx.timings.upstreamEnd, 'number');
  t.equal(result.added, 0, 'no listener on its end');
});

t.test('a JSON-array stream cut short: missing its terminal, the client connection cut', async (t) => {
  const server = createServer((_req, res) => {
    const ctx = ctxFor(res, gemini, true);
    const upstream = new Upstream('application/json');
    void relay(ctx, upstream as never, 0);
    upstream.write(geminiArray.slice(0, 40));
    setImmediate(() => upstream.destroy());
    res.once('close', () => { t.equal(ctx.outcome, 'missing-terminal'); t.equal(ctx.timings.upstreamEnd, undefined, 'no end to time'); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await t.rejects(answer.text(), 'the body breaks off');
});

/** The codecs of a chat client on an Anthropic upstream. */
function chatOnAnthropic(stream: boolean) {
  const request = openaiChat.codec!.decodeRequest({ model: 'gpt-x', stream, messages: [{ role: 'user', content: 'Hi' }] }, 'generate', { model: 'gpt-x', path: '/v1/chat/completions', query: '' });
  return { client: openaiChat.codec!, upstream: anthropicMessages.codec!, cctx: { request, clientModel: 'gpt-x', defaults: { maxOutputTokens: 1024 } } };
}

t.test('translated, whole: the chat answer, usage read, the end timed, no listener of ours on its end', async (t) => {
  const { status, body, ...result } = await relayed(t, {
    format: openaiChat, stream: false, type: 'application/json', body: anthropicWhole,
    run: (ctx, upstream) => relayTranslated(ctx, upstream as never, 0, chatOnAnthropic(false)),
  });
  t.equal(status, 200);
  const chat = JSON.parse(body) as { object: string; choices: { message: { content: string } }[] };
  t.equal(chat.object, 'chat.completion');
  t.equal(chat.choices[0].message.content, 'Hello there');
  t.equal(result.ctx.outcome, 'completed');
  t.equal(result.ctx.usage?.input, 11);
  t.equal(result.ctx.usage?.output, 4);
  t.type(result.ctx.timings.upstreamEnd, 'number');
  t.equal(result.added, 0, 'no listener on its end');
});

t.test('translated, streamed: chat chunks to [DONE], usage read, the end timed, no listener of ours on its end', async (t) => {
  const { status, body, ...result } = await relayed(t, {
    format: openaiChat, stream: true, type: 'text/event-stream', body: anthropicStream,
    run: (ctx, upstream) => relayTranslated(ctx, upstream as never, 0, chatOnAnthropic(true)),
  });
  t.equal(status, 200);
  t.match(body, /"content":"Hello there"/);
  t.match(body, /data: \[DONE\]\n\n$/);
  t.equal(result.ctx.outcome, 'completed');
  t.equal(result.ctx.usage?.output, 4);
  t.type(result.ctx.timings.upstreamEnd, 'number');
  t.equal(result.added, 0, 'no listener on its end');
});

t.test('readAll: the whole body once ended, what came when cut; no listener on its end', async (t) => {
  const whole = new Upstream('application/json');
  const { added, value } = await endListenersOf(whole, () => readAll(whole as never), anthropicWhole);
  t.equal(value.toString(), anthropicWhole);
  t.equal(added, 0);
  const cut = new Upstream('application/json');
  const reading = readAll(cut as never);
  cut.write('{"partial":');
  setImmediate(() => cut.destroy());
  t.equal((await reading).toString(), '{"partial":', 'what arrived before the cut');
});

t.test('holdFirstContent: a stream that ends before any content fails the attempt; no listener on its end meanwhile', async (t) => {
  const { result } = await serveOne(t, async (res) => {
    const ctx = ctxFor(res, anthropicMessages, true);
    const upstream = new Upstream('text/event-stream');
    const { added, value } = await endListenersOf(upstream, () => holdFirstContent(ctx, upstream as never, 5000), sse('message_start', { message: { id: 'm', usage: { input_tokens: 1, output_tokens: 0 } } }));
    res.end();
    return { added, value };
  });
  t.strictSame(result.value, { kind: 'failure', failure: { kind: 'stream_error', message: 'the stream ended before any content' } });
  t.equal(result.added, 0);
});
