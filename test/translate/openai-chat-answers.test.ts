// The chat codec's answer side against the hard cases (reference translation.md §3, §4): names restored, stop-reason and
// error tables both ways, usage exactness, streams from lenient OpenAI-compatible servers, stream endings, per-request state.
import t from 'tap';
import { codec } from '../../adapters/openai-chat/codec/index.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { SseParser } from '../../adapters/shared/sse.ts';
import { fitName, OPENAI_NAMES } from '../../adapters/shared/tool-names.ts';
import type { CanonError, CanonEvent, CanonRequest, ErrorKind, StopReason, StreamDecoder } from '../../core/canonical.ts';
import { sseData } from '../helpers/http.ts';
import { requests, responses, streams } from './canonical-fixtures.ts';
import { ctxFor } from './openai-chat-fixtures.ts';

type Body = Record<string, any>;
const ZERO = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
const frames = (chunks: unknown[]) => chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('');
const chunk = (delta: Body, finish: string | null = null, extra: Body = {}) => ({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
const answer = (message: Body, finish: string, extra: Body = {}) => ({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], ...extra });

function run(decoder: StreamDecoder, text: string): CanonEvent[] {
  const parser = new SseParser();
  return [...parser.push(text).flatMap((f) => decoder.frame(f)), ...decoder.end()];
}
const decodeText = (text: string, request: CanonRequest = requests.toolRoundTrip) => collectEvents(run(codec.decodeStream(ctxFor(request)), text));

t.test('tool names fitted on the way up come back as the client named them, whole and streamed', async (t) => {
  const long = `mcp__server__${'very_long_tool_name_'.repeat(4)}`;
  const request: CanonRequest = { ...requests.forcedTool, tools: [{ kind: 'function', name: long, parameters: { type: 'object' } }, { kind: 'function', name: 'files.read', parameters: { type: 'object' } }] };
  const fitted = fitName(long, OPENAI_NAMES);
  const whole = codec.decodeResponse(answer({ content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: fitted, arguments: '{}' } }, { id: 'c2', type: 'function', function: { name: fitName('files.read', OPENAI_NAMES), arguments: '{}' } }] }, 'tool_calls'), ctxFor(request));
  t.strictSame(whole.content.map((b) => b.type === 'tool_call' && b.name), [long, 'files.read']);
  const streamed = decodeText(frames([
    chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: fitted, arguments: '{}' } }] }),
    chunk({}, 'tool_calls'), '[DONE]',
  ]), request);
  t.equal(streamed.content[0].type === 'tool_call' && streamed.content[0].name, long);
  const unknown = decodeText(frames([chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'unknown_tool' } }] }), chunk({}, 'stop'), '[DONE]']));
  t.match(unknown.content, [{ type: 'tool_call', name: 'unknown_tool' }], 'an unknown name stays as it is');
});

t.test('stop reasons: chat finish_reason → canonical, with what the answer holds taken into account', async (t) => {
  const table: [string | null, Body, StopReason][] = [
    ['stop', { content: 'a' }, 'end'],
    ['length', { content: 'a' }, 'max_tokens'],
    ['tool_calls', { tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_use'],
    ['function_call', { function_call: { name: 'f', arguments: '{}' } }, 'tool_use'],
    ['content_filter', { content: null }, 'content_filter'],
    ['stop', { tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_use'],
    ['stop', { content: null, refusal: 'I can\'t help with that.' }, 'content_filter'],
    ['eos_token', { content: 'a' }, 'end'],
    [null, { content: 'a' }, 'end'],
  ];
  for (const [finish, message, stop] of table) {
    t.equal(codec.decodeResponse(answer(message, finish as string), ctxFor(requests.text)).stop, stop, `${finish} with ${Object.keys(message)}`);
  }
  const refusal = codec.decodeResponse(answer({ content: null, refusal: 'I can\'t help with that.' }, 'stop'), ctxFor(requests.text));
  t.strictSame(refusal.content, [{ type: 'text', text: 'I can\'t help with that.' }], 'a refusal is the answer\'s text');
  const legacy = codec.decodeResponse(answer({ function_call: { name: 'f', arguments: '{"a":1}' } }, 'function_call'), ctxFor(requests.text));
  t.strictSame(legacy.content, [{ type: 'tool_call', id: 'call_0', name: 'f', arguments: '{"a":1}' }], 'a legacy function_call gets an id');
});

t.test('stop reasons: canonical → chat finish_reason, whole and streamed', async (t) => {
  const table: [StopReason, boolean, string][] = [
    ['end', false, 'stop'], ['stop_sequence', false, 'stop'], ['pause', false, 'stop'], ['max_tokens', false, 'length'],
    ['content_filter', false, 'content_filter'], ['tool_use', true, 'tool_calls'], ['end', true, 'tool_calls'], ['tool_use', false, 'stop'],
    ['max_tokens', true, 'length'],
  ];
  for (const [stop, calls, finish] of table) {
    const content = calls ? [{ type: 'tool_call' as const, id: 'c', name: 'f', arguments: '{}' }] : [{ type: 'text' as const, text: 'a' }];
    const whole = codec.encodeResponse({ id: 'x', model: 'm', content, stop, usage: ZERO }, ctxFor(requests.text)) as Body;
    t.equal(whole.choices[0].finish_reason, finish, `${stop}${calls ? ' with calls' : ''} → ${finish}`);
    const encoder = codec.encodeStream(ctxFor(requests.text));
    const events: CanonEvent[] = [{ type: 'start', id: 'x', model: 'm' }, { type: 'block_start', index: 0, block: { type: 'whole', block: content[0] } }, { type: 'block_end', index: 0 }, { type: 'finish', stop }];
    const last = sseData(events.map((e) => encoder.event(e)).join('') + encoder.end()).slice(0, -1).map((f) => JSON.parse(f)).at(-1);
    t.equal(last.choices[0].finish_reason, finish, `streamed: ${stop} → ${finish}`);
  }
});

t.test('usage: the upstream\'s numbers exactly, cache reads inside prompt tokens (never counted twice)', async (t) => {
  const usage = { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 150 }, completion_tokens_details: { reasoning_tokens: 120 } };
  const canonical = { input: 1200, cacheRead: 1000, cacheWrite: 150, output: 300, reasoning: 120 };
  t.strictSame(codec.decodeResponse(answer({ content: 'a' }, 'stop', { usage }), ctxFor(requests.text)).usage, canonical, 'whole answer');
  t.strictSame(decodeText(frames([chunk({ content: 'a' }), chunk({}, 'stop'), { id: 'x', choices: [], usage }, '[DONE]'])).usage, canonical, 'stream usage chunk');
  t.strictSame(decodeText(frames([chunk({ content: 'a' }), chunk({}, 'stop', { usage }), '[DONE]'])).usage, canonical, 'usage in the finish chunk itself');
  const back = codec.encodeResponse({ ...responses.cached }, ctxFor(requests.text)) as Body;
  t.equal(back.usage.prompt_tokens, 1200, 'prompt tokens = all input (1000 cached of it), not 1000 + 1200');
  t.equal(back.usage.total_tokens, 1203);
});

t.test('streams from lenient OpenAI-compatible servers: ids minted, no index, arguments in the first fragment, reasoning spelled `reasoning`', async (t) => {
  const noIds = decodeText(frames([
    chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }, { index: 1, function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] }),
    chunk({}, 'tool_calls'), '[DONE]',
  ]));
  t.strictSame(noIds.content, [
    { type: 'tool_call', id: 'call_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Rome"}' },
  ], 'parallel calls to one function get distinct ids, arguments from the first fragment kept');
  const noIndex = decodeText(frames([
    chunk({ tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'), '[DONE]',
  ]));
  t.strictSame(noIndex.content.map((b) => b.type === 'tool_call' && [b.id, b.name, b.arguments]), [['a', 'f', '{"x":1}'], ['b', 'g', '{}']], 'calls without index keyed by id');
  const reasoning = decodeText(frames([chunk({ reasoning: 'hmm ' }), chunk({ reasoning: 'ok' }), chunk({ content: 'Yes' }), chunk({}, 'stop'), '[DONE]']));
  t.strictSame(reasoning.content, [{ type: 'reasoning', text: 'hmm ok' }, { type: 'text', text: 'Yes' }]);
  const whole = codec.decodeResponse(answer({ content: 'x', tool_calls: [{ type: 'function', function: { name: 'f', arguments: { a: 1 } } }, { type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls'), ctxFor(requests.text));
  t.strictSame(whole.content.slice(1).map((b) => b.type === 'tool_call' && [b.id, b.arguments]), [['call_0', '{"a":1}'], ['call_1', '{}']], 'whole answers too; object arguments taken as JSON');
  const refused = decodeText(frames([chunk({ refusal: 'I can\'t ' }), chunk({ refusal: 'do that.' }), chunk({}, 'stop'), '[DONE]']));
  t.strictSame([refused.content, refused.stop], [[{ type: 'text', text: 'I can\'t do that.' }], 'content_filter'], 'a streamed refusal');
  const custom = decodeText(frames([
    chunk({ tool_calls: [{ index: 0, id: 'p', type: 'custom', custom: { name: 'apply_patch', input: '' } }] }),
    chunk({ tool_calls: [{ index: 0, custom: { input: '*** Begin' } }] }), chunk({}, 'tool_calls'), '[DONE]',
  ]));
  t.strictSame(custom.content, [{ type: 'tool_call', id: 'p', name: 'apply_patch', arguments: '*** Begin', custom: true }], 'a custom tool call streamed');
});

t.test('stream endings: a finish needs the upstream to have said how it ended', async (t) => {
  const events = (text: string) => run(codec.decodeStream(ctxFor(requests.text)), text);
  const cutBeforeFinish = events(frames([chunk({ content: 'Hel' })]));
  t.notOk(cutBeforeFinish.some((e) => e.type === 'finish' || e.type === 'error'), 'no finish_reason, no [DONE]: no finish (the bridge fails the stream)');
  const doneWithoutFinish = events(frames([chunk({ content: 'Hel' }), '[DONE]']));
  t.notOk(doneWithoutFinish.some((e) => e.type === 'finish'), '[DONE] without a finish_reason: no finish either');
  const finishWithoutDone = events(frames([chunk({ content: 'Hello' }), chunk({}, 'stop')]));
  t.match(finishWithoutDone.at(-1), { type: 'finish', stop: 'end' }, 'finish_reason said, then closed: finished');
  t.equal(finishWithoutDone.filter((e) => e.type === 'block_end').length, 1, 'its block closed');
  const noise = events('data: not json\n\n: comment\n\n' + frames([chunk({ content: 'a' }), chunk({}, 'stop'), '[DONE]']) + frames([chunk({ content: 'late' })]));
  t.strictSame(collectEvents(noise).content, [{ type: 'text', text: 'a' }], 'noise ignored, nothing after [DONE]');

  const encoder = codec.encodeStream(ctxFor(requests.text));
  const text = encoder.event({ type: 'start', id: 'x', model: 'm' }) + encoder.event({ type: 'block_start', index: 0, block: { type: 'text' } }) + encoder.event({ type: 'delta', index: 0, text: 'Hel' }) + encoder.end();
  const last = sseData(text).at(-1)!;
  t.notOk(sseData(text).includes('[DONE]'), 'an encoder ended before the finish never says [DONE]');
  t.match(JSON.parse(last), { error: { type: 'server_error' } }, 'it ends with an error chunk');
});

t.test('stream encoder: whole blocks, a late start, signatures and images left out, held tool calls flushed at the finish', async (t) => {
  const encoder = codec.encodeStream(ctxFor({ ...requests.streamText, extras: { 'openai-chat': { includeUsage: true } } }));
  const events: CanonEvent[] = [
    { type: 'block_start', index: 0, block: { type: 'reasoning' } },
    { type: 'delta', index: 0, text: 'think' },
    { type: 'delta', index: 0, signature: { format: 'anthropic-messages', value: 'SIG' } },
    { type: 'block_end', index: 0 },
    { type: 'block_start', index: 1, block: { type: 'whole', block: { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } } } },
    { type: 'block_start', index: 2, block: { type: 'whole', block: { type: 'text', text: 'Done.' } } },
    { type: 'block_start', index: 3, block: { type: 'tool_call', id: 'a', name: 'f' } },
    { type: 'block_start', index: 4, block: { type: 'whole', block: { type: 'tool_call', id: 'b', name: 'g', arguments: '{"y":2}' } } },
    { type: 'delta', index: 3, arguments: '{"x":1}' },
    { type: 'usage', usage: { input: 5 } },
    { type: 'finish', stop: 'tool_use', usage: { input: 5, cacheRead: 0, cacheWrite: 0, output: 7, reasoning: 2 } },
  ];
  const out = events.map((e) => encoder.event(e)).join('') + encoder.end();
  t.notMatch(out, /SIG|AAAA/, 'no signature, no image bytes');
  const deltas = sseData(out).slice(0, -1).map((f) => JSON.parse(f)).map((c) => c.choices[0]?.delta ?? c.usage);
  t.strictSame(deltas, [
    { role: 'assistant', content: '' },
    { reasoning_content: 'think' },
    { content: 'Done.' },
    { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] },
    { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{"y":2}' } }] },
    {},
    { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 2 } },
  ]);
});

t.test('stream state is per request: two encoders and two decoders interleaved give what each gives alone', async (t) => {
  const a = streams.parallelToolCalls.events;
  const b = streams.reasoning.events;
  const alone = (events: CanonEvent[]) => { const e = codec.encodeStream(ctxFor(requests.streamText)); return events.map((x) => e.event(x)).join('') + e.end(); };
  const ea = codec.encodeStream(ctxFor(requests.streamText));
  const eb = codec.encodeStream(ctxFor(requests.streamText));
  let outA = '';
  let outB = '';
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) outA += ea.event(a[i]);
    if (b[i]) outB += eb.event(b[i]);
  }
  t.equal(outA + ea.end(), alone(a));
  t.equal(outB + eb.end(), alone(b));
  const textA = alone(a);
  const textB = alone(b);
  const da = codec.decodeStream(ctxFor(requests.text));
  const db = codec.decodeStream(ctxFor(requests.text));
  const pa = new SseParser();
  const pb = new SseParser();
  const evA: CanonEvent[] = [];
  const evB: CanonEvent[] = [];
  for (let i = 0; i < Math.max(textA.length, textB.length); i += 11) {
    evA.push(...pa.push(textA.slice(i, i + 11)).flatMap((f) => da.frame(f)));
    evB.push(...pb.push(textB.slice(i, i + 11)).flatMap((f) => db.frame(f)));
  }
  t.strictSame(collectEvents([...evA, ...da.end()]), collectEvents(run(codec.decodeStream(ctxFor(requests.text)), textA)));
  t.strictSame(collectEvents([...evB, ...db.end()]), collectEvents(run(codec.decodeStream(ctxFor(requests.text)), textB)));
});

t.test('errors: canonical → the OpenAI envelope with the status and type OpenAI uses', async (t) => {
  const table: [ErrorKind, number, number, string, string | null][] = [
    ['invalid_request', 400, 400, 'invalid_request_error', null],
    ['invalid_request', 422, 422, 'invalid_request_error', null],
    ['authentication', 401, 401, 'invalid_request_error', 'invalid_api_key'],
    ['billing', 402, 429, 'insufficient_quota', 'insufficient_quota'],
    ['permission', 403, 403, 'permission_error', null],
    ['not_found', 404, 404, 'invalid_request_error', null],
    ['request_too_large', 413, 413, 'invalid_request_error', null],
    ['rate_limit', 429, 429, 'rate_limit_error', 'rate_limit_exceeded'],
    ['server', 500, 500, 'server_error', null],
    ['overloaded', 529, 503, 'server_error', null],
    ['timeout', 504, 504, 'timeout_error', null],
  ];
  for (const [kind, from, status, type, code] of table) {
    const out = codec.encodeError({ status: from, kind, message: `m-${kind}` });
    t.equal(out.status, status, `${kind} ${from} → ${status}`);
    t.strictSame(out.body, { error: { message: `m-${kind}`, type, param: null, code } }, `${kind}: envelope`);
  }
  t.strictSame(codec.encodeError({ status: 429, kind: 'rate_limit', message: 'x', retryAfter: '7' }).headers, { 'retry-after': '7' }, 'retry-after kept');
  t.strictSame(codec.encodeError({ status: 402, kind: 'billing', message: 'x' }).headers, { 'x-should-retry': 'false' }, 'no SDK retries on exhausted credit');
  t.equal((codec.encodeError({ status: 400, kind: 'invalid_request', message: 'x', code: 'context_length_exceeded' }).body as Body).error.code, 'context_length_exceeded', 'the upstream\'s code kept');
});

t.test('errors: a chat upstream\'s error body → canonical', async (t) => {
  const env = (type: string, code: string | null, message = 'msg') => JSON.stringify({ error: { message, type, param: null, code } });
  const table: [number, string, Partial<CanonError>][] = [
    [400, env('invalid_request_error', 'context_length_exceeded'), { status: 400, kind: 'invalid_request', code: 'context_length_exceeded' }],
    [401, env('invalid_request_error', 'invalid_api_key'), { status: 401, kind: 'authentication' }],
    [403, env('permission_error', null), { status: 403, kind: 'permission' }],
    [404, env('invalid_request_error', 'model_not_found'), { status: 404, kind: 'not_found' }],
    [429, env('tokens', 'rate_limit_exceeded'), { status: 429, kind: 'rate_limit' }],
    [429, env('insufficient_quota', 'insufficient_quota'), { status: 429, kind: 'billing' }],
    [500, env('server_error', null), { status: 500, kind: 'server' }],
    [503, env('server_error', null), { status: 503, kind: 'overloaded' }],
    [504, 'upstream timed out', { status: 504, kind: 'timeout', message: 'upstream timed out' }],
    [502, '', { status: 502, kind: 'server', message: 'The upstream answered with HTTP 502' }],
    [418, '{"error":"teapot"}', { status: 418, kind: 'invalid_request', message: 'teapot' }],
  ];
  for (const [status, body, expected] of table) t.match(codec.decodeError(status, body), { message: 'msg', ...expected }, `${status} ${body.slice(0, 40)}`);
  t.equal(codec.decodeError(500, 'x'.repeat(100_000)).message.length, 2000, 'an upstream page is cut short');
});
