// The first-content hold (plugins/proxy/attempt.ts holdFirstContent) hands what it read to the stream pump: the pump goes
// on from the hold's frame reader, and a native stream's scanner is the one that read the opening (never a second one,
// never the same frames twice), while the client still gets the upstream's bytes as they came. A translated stream's
// codec sees every frame once, in order; a frame (and a character) cut by the hold's end is read whole; what the held
// scanner set is the request's once committed (a Responses stream's position and id), and a failed attempt's is not.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { openaiResponses } from '../../adapters/openai-responses/index.ts';
import { POSITION } from '../../adapters/openai-responses/stream.ts';
import type { Codec } from '../../core/canonical.ts';
import type { ContextVar, Ctx, FormatAdapter, SseFrame, StreamScanner } from '../../core/types.ts';
import { holdFirstContent } from '../../plugins/proxy/attempt.ts';
import { relay } from '../../plugins/proxy/relay.ts';
import { relayTranslated } from '../../plugins/proxy/translate/relay.ts';
import { endingCtx } from '../helpers/stage-ctx.ts';

class Upstream extends PassThrough {
  statusCode = 200;
  headers = { 'content-type': 'text/event-stream' };
  complete = false;
  whole(): boolean { return false; }
}

/** A context with variables of its own (get/set), as a request's. */
function ctxFor(res: ServerResponse, format: FormatAdapter): Ctx {
  const vars = new Map<string, unknown>();
  return endingCtx({
    id: 'hold-1', res, format, stream: true, timings: { start: performance.now() }, log: { warn() {}, info() {}, error() {} },
    get: <T>(v: ContextVar<T>) => vars.get(v.name) as T | undefined,
    set: <T>(v: ContextVar<T>, value: T | undefined) => { vars.set(v.name, value); },
  });
}

/** `format` with its scanners counted: how many were made, and every frame any of them read. */
function counted(format: FormatAdapter): { format: FormatAdapter; scanners: number; frames: string[] } {
  const seen = { format, scanners: 0, frames: [] as string[] };
  seen.format = {
    ...format,
    scanStream: (ctx: Ctx): StreamScanner => {
      seen.scanners++;
      const scanner = format.scanStream(ctx);
      return {
        frame: (f: SseFrame) => { seen.frames.push(f.event ?? f.data); return scanner.frame(f); },
        usage: () => scanner.usage(), terminal: () => scanner.terminal(), error: () => scanner.error(),
        started: scanner.started && (() => scanner.started!()),
        incomplete: scanner.incomplete && (() => scanner.incomplete!()),
        streamed: scanner.streamed && (() => scanner.streamed!()),
      };
    },
  };
  return seen;
}

/**
 * Serves one client: `run` holds and relays an upstream the test feeds (`feed`, given the hold's promise); resolves with
 * the client's bytes and the request's context.
 */
async function served(t: Test, format: FormatAdapter, waitMs: number,
  relayed: (ctx: Ctx, upstream: Upstream, opening: Awaited<ReturnType<typeof holdFirstContent>>) => Promise<void>,
  feed: (upstream: Upstream, held: Promise<unknown>) => Promise<void>): Promise<{ bytes: Buffer; ctx: Ctx; kind: string }> {
  let done!: (v: { ctx: Ctx; kind: string }) => void;
  const finished = new Promise<{ ctx: Ctx; kind: string }>((resolve) => { done = resolve; });
  const server = createServer((_req, res) => {
    const ctx = ctxFor(res, format);
    const upstream = new Upstream();
    const held = holdFirstContent(ctx, upstream as never, waitMs, format);
    void feed(upstream, held);
    void held.then(async (h) => {
      if (h.kind !== 'commit') { res.end(); return done({ ctx, kind: h.kind }); }
      // As the exchange: the relay made, then the stream let flow on.
      const relaying = relayed(ctx, upstream, h);
      upstream.resume();
      await relaying;
      done({ ctx, kind: h.kind });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  const bytes = Buffer.from(await answer.arrayBuffer());
  return { bytes, ...(await finished) };
}

const sse = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const OPENING = [
  sse('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], usage: { input_tokens: 11, output_tokens: 1 } } }),
  sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello there ✓' } }),
  // After the frame that decides the hold, in the same chunk: the relay's too, read once.
  sse('content_block_stop', { index: 0 }),
];
const REST = [
  sse('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }),
  sse('message_stop', {}),
];
const EVENTS = ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'];

const endAfter = (upstream: Upstream, text: string | Buffer) => { upstream.complete = true; upstream.end(text); };

t.test('native: the opening frames are read by one scanner, once; the client gets the bytes as they came', async (t) => {
  const c = counted(anthropicMessages);
  const { bytes, ctx } = await served(t, c.format, 5000, (ctx, upstream, h) => relay(ctx, upstream as never, 0, true, undefined, h.kind === 'commit' ? h.opening : undefined),
    async (upstream, held) => {
      upstream.write(OPENING.join(''));
      await held;
      endAfter(upstream, REST.join(''));
    });
  t.equal(bytes.toString('utf8'), OPENING.join('') + REST.join(''), 'every byte, as it came');
  t.equal(c.scanners, 1, 'one scanner for the request: the hold\'s');
  t.strictSame(c.frames, EVENTS, 'each frame read once, in order');
  t.equal(ctx.outcome, 'completed');
  t.strictSame(ctx.usage, { input: 11, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 }, 'usage of the opening frame and of the end');
  t.equal(ctx.streamed?.chars, 'Hello there ✓'.length, 'the text counted once');
});

t.test('a frame and a character cut by the hold\'s end (the timer) are read whole by the pump, once', async (t) => {
  const c = counted(anthropicMessages);
  const all = Buffer.from(OPENING.join('') + REST.join(''));
  // Inside the ✓ (three bytes in UTF-8) of the first content frame: the hold ends on its timer, with no content read.
  const cut = all.indexOf(Buffer.from('✓')) + 1;
  let committedAt = 0;
  const { bytes, ctx } = await served(t, c.format, 30, (ctx, upstream, h) => {
    t.equal(h.kind === 'commit' && h.opening?.frames.length, 2, 'the hold read the two whole frames before the cut');
    return relay(ctx, upstream as never, 0, true, undefined, h.kind === 'commit' ? h.opening : undefined);
  }, async (upstream, held) => {
    upstream.write(all.subarray(0, cut));
    await held;
    committedAt = c.frames.length;
    upstream.write(all.subarray(cut, cut + 5));
    setTimeout(() => endAfter(upstream, all.subarray(cut + 5)), 5);
  });
  t.equal(committedAt, 2, 'committed by the timer after two frames');
  t.ok(bytes.equals(all), 'every byte, as it came');
  t.strictSame(c.frames, EVENTS, 'each frame read once, the cut one whole');
  t.equal(c.scanners, 1);
  t.equal(ctx.streamed?.chars, 'Hello there ✓'.length, 'the cut character read whole');
  t.equal(ctx.outcome, 'completed');
});

t.test('translated: the codec decodes every frame once, in order, the held ones first', async (t) => {
  const c = counted(anthropicMessages);
  const decoded: string[] = [];
  const upstreamCodec: Codec = {
    ...anthropicMessages.codec!,
    decodeStream: (cctx) => {
      const d = anthropicMessages.codec!.decodeStream(cctx);
      return { frame: (f: SseFrame) => { decoded.push(f.event ?? f.data); return d.frame(f); }, end: () => d.end() };
    },
  };
  const request = openaiChat.codec!.decodeRequest({ model: 'gpt-x', stream: true, messages: [{ role: 'user', content: 'Hi' }] }, 'generate', { model: 'gpt-x', path: '/v1/chat/completions', query: '' });
  const codecs = { client: openaiChat.codec!, upstream: upstreamCodec, cctx: { request, clientModel: 'gpt-x', defaults: { maxOutputTokens: 1024 } } };
  const { bytes, ctx } = await served(t, c.format, 5000, (ctx, upstream, h) => relayTranslated(ctx, upstream as never, 0, codecs, undefined, h.kind === 'commit' ? h.opening : undefined),
    async (upstream, held) => {
      upstream.write(OPENING.join(''));
      await held;
      endAfter(upstream, REST.join(''));
    });
  const text = bytes.toString('utf8');
  t.strictSame(decoded, EVENTS, 'each frame decoded once, in order');
  t.strictSame(c.frames, EVENTS.slice(0, 4), 'the upstream format\'s scanner read the opening only');
  t.equal(text.match(/"content":"Hello there ✓"/g)?.length, 1, 'the content once');
  t.match(text, /data: \[DONE\]\n\n$/);
  t.equal(ctx.outcome, 'completed');
  t.equal(ctx.usage?.input, 11);
  t.equal(ctx.usage?.output, 4);
});

const responsesOpening = (id: string) => [
  sse('response.created', { sequence_number: 0, response: { id, object: 'response', status: 'in_progress', model: 'gpt-x', output: [] } }),
  sse('response.output_text.delta', { sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' }),
].join('');

t.test('what the held scanner set is the request\'s once committed: a Responses stream\'s id, before it flows on', async (t) => {
  const c = counted(openaiResponses);
  let idAtCommit: unknown;
  const { bytes, ctx } = await served(t, c.format, 5000, (ctx, upstream, h) => {
    // Where the exchange reads the id to pin before the stream flows on (affinity.streamedId).
    idAtCommit = ctx.get(POSITION)?.id;
    return relay(ctx, upstream as never, 0, true, undefined, h.kind === 'commit' ? h.opening : undefined);
  }, async (upstream, held) => {
    upstream.write(responsesOpening('resp_kept'));
    await held;
    setTimeout(() => upstream.destroy(), 20);
  });
  t.equal(idAtCommit, 'resp_kept', 'the id is on the request once the hold committed');
  t.equal(c.scanners, 1);
  t.equal(ctx.outcome, 'missing-terminal');
  // The cut stream's failure continues the same response: the position the one scanner kept.
  t.match(bytes.toString('utf8'), /event: response\.failed\ndata: \{"type":"response\.failed","sequence_number":2,"response":\{"id":"resp_kept"/);
});

t.test('a failed attempt leaves nothing its scanner set on the request', async (t) => {
  const c = counted(openaiResponses);
  const { ctx, kind } = await served(t, c.format, 5000, () => Promise.resolve(), async (upstream) => {
    upstream.write(sse('response.created', { sequence_number: 0, response: { id: 'resp_failed', object: 'response', status: 'in_progress', output: [] } }));
    setTimeout(() => endAfter(upstream, sse('error', { sequence_number: 1, message: 'overloaded' })), 5);
  });
  t.equal(kind, 'failure');
  t.equal(ctx.get(POSITION), undefined, 'no position of the failed stream');
});
