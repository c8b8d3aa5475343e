// adapters/openai-chat: usage mapping, forced stream usage, the stream scanner (usage, strip, [DONE], errors, model rewrite), envelopes.
import t from 'tap';
import { chatUsage, openaiChat } from '../../adapters/openai-chat/index.ts';
import { SseParser } from '../../adapters/shared/sse.ts';
import { GatewayError } from '../../core/errors.ts';
import type { Ctx, FrameVerdict, StreamScanner } from '../../core/types.ts';
import { varsOf } from './helpers.ts';

const fakeCtx = (model?: string, upstreamModel?: string) => varsOf({ model, upstreamModel }) as unknown as Ctx & { vars: Map<string, unknown> };

// The stream OpenAI sends with stream_options.include_usage (docs/wire-formats.md#chat-stream), byte for byte.
const chunk = (choices: string, usage = 'null', model = 'gpt-4o-mini') =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1767225600,"model":"${model}","choices":${choices},"usage":${usage}}\n\n`;
const USAGE = '{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}';
const CONTENT = [
  chunk('[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]'),
  chunk('[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}]'),
  chunk('[{"index":0,"delta":{"content":"lo!"},"logprobs":null,"finish_reason":null}]'),
  chunk('[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]'),
];
const USAGE_CHUNK = chunk('[]', USAGE);
const DONE = 'data: [DONE]\n\n';
const STREAM = [...CONTENT, USAGE_CHUNK, DONE].join('');

/** Run upstream bytes through the parser and a scanner, in small chunks; returns what the client receives and each verdict. */
function relay(scanner: StreamScanner, upstream: string, chunkSize = 17): { out: string; verdicts: FrameVerdict[] } {
  const parser = new SseParser();
  const bytes = Buffer.from(upstream);
  let out = '';
  const verdicts: FrameVerdict[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) {
    for (const frame of parser.push(bytes.subarray(i, i + chunkSize))) {
      const v = scanner.frame(frame);
      verdicts.push(v);
      out += v === 'pass' ? frame.raw : v === 'drop' ? '' : v.replace;
    }
  }
  return { out: out + parser.rest(), verdicts };
}

t.test('adapter data: name, platforms, auth style, model location, stream flag, keepalive', async (t) => {
  t.equal(openaiChat.name, 'openai-chat');
  t.strictSame(openaiChat.platforms, ['openai']);
  t.equal(openaiChat.upstreamAuth, 'bearer');
  t.strictSame(openaiChat.model, { body: 'model' });
  t.equal(openaiChat.keepalive, ': keepalive\n\n');
  const ctx = fakeCtx();
  t.equal(openaiChat.isStream({ stream: true }, ctx), true);
  t.equal(openaiChat.isStream({ stream: false }, ctx), false);
  t.equal(openaiChat.isStream({ stream: 'true' }, ctx), false, 'only the boolean true streams');
  t.equal(openaiChat.isStream({}, ctx), false);
  t.equal(openaiChat.isStream(undefined, ctx), false);
});

t.test('chatUsage: cached tokens stay inside input, reasoning inside output', async (t) => {
  t.strictSame(chatUsage({
    prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500,
    prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0 },
  }), { input: 1200, cacheRead: 1024, cacheWrite: 0, output: 300, reasoning: 256 });
  t.strictSame(chatUsage({ prompt_tokens: 9, completion_tokens: 3 }), { input: 9, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 }, 'details are optional');
  t.strictSame(chatUsage({ prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 2, cache_write_tokens: 3 } }),
    { input: 5, cacheRead: 2, cacheWrite: 3, output: 1, reasoning: 0 });
  t.strictSame(chatUsage({ prompt_tokens: '9', completion_tokens: null, prompt_tokens_details: null }), { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    'non-numbers count as zero');
  t.strictSame(chatUsage({}), { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
  t.equal(chatUsage(null), undefined);
  t.equal(chatUsage(undefined), undefined);
  t.equal(chatUsage(42), undefined);
});

t.test('usageFromBody reads a non-stream response', async (t) => {
  t.strictSame(openaiChat.usageFromBody({ id: 'chatcmpl-1', usage: { prompt_tokens: 22, completion_tokens: 11, prompt_tokens_details: { cached_tokens: 4 } } }),
    { input: 22, cacheRead: 4, cacheWrite: 0, output: 11, reasoning: 0 });
  t.equal(openaiChat.usageFromBody({ id: 'chatcmpl-1' }), undefined);
  t.equal(openaiChat.usageFromBody(undefined), undefined);
});

t.test('prepareUpstream forces include_usage only for streams that did not ask, and marks the usage chunk for stripping', async (t) => {
  const prepare = openaiChat.prepareUpstream!;

  const plain = fakeCtx();
  const nonStream: Record<string, unknown> = { model: 'm', messages: [] };
  t.equal(prepare(nonStream, plain), false, 'a non-stream body is unchanged');
  t.strictSame(nonStream, { model: 'm', messages: [] });
  t.equal(plain.vars.size, 0);

  const falseStream: Record<string, unknown> = { model: 'm', stream: false, stream_options: { include_usage: true } };
  t.equal(prepare(falseStream, plain), false);
  t.strictSame(falseStream, { model: 'm', stream: false, stream_options: { include_usage: true } });

  const asked = fakeCtx();
  const askedBody: Record<string, unknown> = { model: 'm', stream: true, stream_options: { include_usage: true } };
  t.equal(prepare(askedBody, asked), false, 'a client that asked for usage is left alone');
  t.strictSame(askedBody, { model: 'm', stream: true, stream_options: { include_usage: true } });
  t.equal(asked.vars.size, 0, 'and its usage chunk is not stripped');

  const silent = fakeCtx();
  const silentBody: Record<string, unknown> = { model: 'm', stream: true };
  t.equal(prepare(silentBody, silent), true);
  t.strictSame(silentBody, { model: 'm', stream: true, stream_options: { include_usage: true } });
  t.strictSame([...silent.vars.values()], [true], 'one strip flag is set');

  const declined = fakeCtx();
  const declinedBody: Record<string, unknown> = { model: 'm', stream: true, stream_options: { include_usage: false, include_obfuscation: false } };
  t.equal(prepare(declinedBody, declined), true);
  t.strictSame(declinedBody.stream_options, { include_usage: true, include_obfuscation: false }, 'other stream options are kept');
  t.strictSame([...declined.vars.values()], [true]);

  const nullOptions = fakeCtx();
  const nullBody: Record<string, unknown> = { model: 'm', stream: true, stream_options: null };
  t.equal(prepare(nullBody, nullOptions), true);
  t.strictSame(nullBody.stream_options, { include_usage: true });
});

t.test('scanner, client asked for usage: every frame passes, usage captured, [DONE] terminal', async (t) => {
  const ctx = fakeCtx('gpt-4o-mini', 'gpt-4o-mini');
  openaiChat.prepareUpstream!({ stream: true, stream_options: { include_usage: true } }, ctx);
  const scanner = openaiChat.scanStream(ctx);
  t.equal(scanner.usage(), undefined);
  t.equal(scanner.terminal(), false);
  const { out, verdicts } = relay(scanner, STREAM);
  t.equal(out, STREAM, 'the client receives the upstream bytes unchanged');
  t.strictSame(verdicts, ['pass', 'pass', 'pass', 'pass', 'pass', 'pass']);
  t.strictSame(scanner.usage(), { input: 9, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 });
  t.equal(scanner.terminal(), true);
  t.equal(scanner.error(), undefined);
});

t.test('scanner, client did not ask: usage captured and the usage chunk dropped', async (t) => {
  const ctx = fakeCtx('gpt-4o-mini', 'gpt-4o-mini');
  openaiChat.prepareUpstream!({ stream: true }, ctx);
  const scanner = openaiChat.scanStream(ctx);
  const { out, verdicts } = relay(scanner, STREAM, 5);
  // The forced usage key is removed too: the client sees chunks as if it had never asked for usage.
  t.equal(out, [...CONTENT.map((c) => c.replace(',"usage":null', '')), DONE].join(''), 'everything but the usage chunk and the forced usage key');
  t.notMatch(out, '"usage"');
  t.strictSame(verdicts.map((v) => (typeof v === 'object' ? 'replace' : v)), ['replace', 'replace', 'replace', 'replace', 'drop', 'pass']);
  t.strictSame(scanner.usage(), { input: 9, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 });
  t.equal(scanner.terminal(), true);
});

t.test('scanner, client did not ask, usage on a chunk with choices: usage removed, choices kept', async (t) => {
  const ctx = fakeCtx();
  openaiChat.prepareUpstream!({ stream: true }, ctx);
  const scanner = openaiChat.scanStream(ctx);
  const last = chunk('[{"index":0,"delta":{},"finish_reason":"stop"}]', '{"prompt_tokens":4,"completion_tokens":2}');
  const { out } = relay(scanner, last);
  const frame = JSON.parse(out.slice('data: '.length));
  t.equal(out.startsWith('data: ') && out.endsWith('\n\n'), true);
  t.equal('usage' in frame, false);
  t.strictSame(frame.choices, [{ index: 0, delta: {}, finish_reason: 'stop' }]);
  t.strictSame(scanner.usage(), { input: 4, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 });
});

t.test('scanner: a stream cut before [DONE] is not terminal', async (t) => {
  const scanner = openaiChat.scanStream(fakeCtx());
  relay(scanner, CONTENT.join(''));
  t.equal(scanner.terminal(), false);
  t.equal(scanner.usage(), undefined, 'no usage chunk, no usage');
});

t.test('scanner: an {"error":...} frame is recorded as error() and passed on', async (t) => {
  const scanner = openaiChat.scanStream(fakeCtx());
  const errorFrame = 'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n';
  const { out, verdicts } = relay(scanner, CONTENT[0] + CONTENT[1] + errorFrame);
  t.equal(out, CONTENT[0] + CONTENT[1] + errorFrame);
  t.strictSame(verdicts, ['pass', 'pass', 'pass']);
  t.equal(scanner.error(), 'The server had an error while processing your request.');
  t.equal(scanner.terminal(), false);

  const bare = openaiChat.scanStream(fakeCtx());
  relay(bare, 'data: {"error":{"type":"server_error"}}\n\n');
  t.equal(bare.error(), 'upstream stream error', 'an error without a message still counts');

  const quoted = openaiChat.scanStream(fakeCtx());
  relay(quoted, chunk('[{"index":0,"delta":{"content":"the word \\"error\\" in text"},"finish_reason":null}]'));
  t.equal(quoted.error(), undefined, 'the word error inside content is not an error');
});

t.test('scanner: model rewritten to the client model when model_map aliased it', async (t) => {
  const ctx = fakeCtx('gpt-4o', 'gpt-4o-2024-08-06');
  openaiChat.prepareUpstream!({ stream: true, stream_options: { include_usage: true } }, ctx);
  const scanner = openaiChat.scanStream(ctx);
  const upstream = [...CONTENT, USAGE_CHUNK].map((c) => c.replace('"model":"gpt-4o-mini"', '"model":"gpt-4o-2024-08-06"')).join('') + DONE;
  const { out, verdicts } = relay(scanner, upstream);
  t.equal(out, STREAM.replaceAll('"model":"gpt-4o-mini"', '"model":"gpt-4o"'), 'every chunk names the client model, nothing else changes');
  t.equal(verdicts.filter((v) => typeof v === 'object').length, 5, 'five chunks replaced');
  t.equal(verdicts[5], 'pass', '[DONE] passes');
  t.notMatch(out, /2024-08-06/);
  t.strictSame(scanner.usage(), { input: 9, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 });
  t.equal(scanner.terminal(), true);
});

t.test('scanner: rewrite keeps the event name and combines with stripping', async (t) => {
  const ctx = fakeCtx('alias', 'real-model');
  openaiChat.prepareUpstream!({ stream: true }, ctx);
  const scanner = openaiChat.scanStream(ctx);
  const named = 'event: chunk\ndata: {"model":"real-model","choices":[]}\n\n';
  const { out, verdicts } = relay(scanner, named + chunk('[]', USAGE, 'real-model') + DONE);
  t.equal(out, `event: chunk\ndata: {"model":"alias","choices":[]}\n\n${DONE}`);
  t.strictSame(verdicts, [{ replace: 'event: chunk\ndata: {"model":"alias","choices":[]}\n\n' }, 'drop', 'pass']);
});

t.test('scanner: no rewrite when the models are equal or unknown', async (t) => {
  for (const ctx of [fakeCtx('gpt-4o-mini', 'gpt-4o-mini'), fakeCtx(undefined, 'x'), fakeCtx('x', undefined), fakeCtx()]) {
    const { out, verdicts } = relay(openaiChat.scanStream(ctx), CONTENT.join(''));
    t.equal(out, CONTENT.join(''));
    t.strictSame(verdicts, ['pass', 'pass', 'pass', 'pass']);
  }
});

t.test('scanner: frames that are not JSON objects pass through', async (t) => {
  const plain = openaiChat.scanStream(fakeCtx());
  t.equal(plain.frame({ data: 'not json', raw: 'data: not json\n\n' }), 'pass');
  t.equal(plain.frame({ data: '{"usage": broken', raw: '' }), 'pass');
  t.equal(plain.frame({ data: '', raw: ': keepalive\n\n' }), 'pass');

  const rewriting = openaiChat.scanStream(fakeCtx('alias', 'real'));
  t.equal(rewriting.frame({ data: 'not json', raw: 'data: not json\n\n' }), 'pass');
  t.equal(rewriting.frame({ data: '', raw: ': keepalive\n\n' }), 'pass', 'a keepalive comment passes while rewriting');
  let verdict: unknown;
  try { verdict = rewriting.frame({ data: 'null', raw: 'data: null\n\n' }); } catch (err) { verdict = err; }
  t.equal(verdict, 'pass', 'a JSON null frame passes while rewriting');
});

t.test('setModel writes the client model only where a model string is', async (t) => {
  const body: Record<string, unknown> = { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06' };
  openaiChat.setModel(body, 'gpt-4o');
  t.strictSame(body, { id: 'chatcmpl-1', model: 'gpt-4o' });
  const none: Record<string, unknown> = { id: 'x' };
  openaiChat.setModel(none, 'gpt-4o');
  t.strictSame(none, { id: 'x' });
});

t.test('errorBody and streamError shapes', async (t) => {
  const statuses: [number, string][] = [
    [400, 'invalid_request_error'], [401, 'invalid_request_error'], [403, 'permission_error'], [404, 'invalid_request_error'],
    [413, 'invalid_request_error'], [429, 'rate_limit_error'], [500, 'server_error'], [502, 'upstream_error'],
    [503, 'server_error'], [504, 'timeout_error'], [418, 'invalid_request_error'], [599, 'server_error'],
  ];
  for (const [status, type] of statuses) {
    t.strictSame(openaiChat.errorBody(new GatewayError(status, 'c', 'm'), { id: 'r' }), { error: { message: 'm', type, param: null, code: 'c' } }, `status ${status}`);
  }
  t.strictSame(openaiChat.errorBody(new GatewayError(400, 'invalid_body', 'Invalid request body: messages', { param: 'messages' }), { id: 'r' }),
    { error: { message: 'Invalid request body: messages', type: 'invalid_request_error', param: 'messages', code: 'invalid_body' } });

  const frame = openaiChat.streamError(new GatewayError(502, 'upstream_failed', 'Upstream connection reset'));
  t.equal(frame, 'data: {"error":{"message":"Upstream connection reset","type":"upstream_error","param":null,"code":"upstream_failed"}}\n\n');
  const [parsed] = new SseParser().push(frame);
  t.strictSame(JSON.parse(parsed.data), { error: { message: 'Upstream connection reset', type: 'upstream_error', param: null, code: 'upstream_failed' } });
  const scanner = openaiChat.scanStream(fakeCtx());
  scanner.frame(parsed);
  t.equal(scanner.error(), 'Upstream connection reset', 'the gateway\'s own stream error is recognised by the scanner');
});

t.test('modelList and modelInfo shapes', async (t) => {
  t.strictSame(openaiChat.modelList!([{ id: 'gpt-4o-mini', owner: 'openai' }, { id: 'gpt-4o', owner: 'gateway' }]), {
    object: 'list',
    data: [
      { id: 'gpt-4o-mini', object: 'model', created: 1704067200, owned_by: 'openai' },
      { id: 'gpt-4o', object: 'model', created: 1704067200, owned_by: 'gateway' },
    ],
  });
  t.strictSame(openaiChat.modelList!([]), { object: 'list', data: [] });
  t.strictSame(openaiChat.modelInfo!({ id: 'gpt-4o', owner: 'gateway' }), { id: 'gpt-4o', object: 'model', created: 1704067200, owned_by: 'gateway' },
    'one model has the same shape as a list entry');
});
