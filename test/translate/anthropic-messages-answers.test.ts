// The Anthropic Messages codec on every canonical answer and event stream: the Message and the event stream a client
// gets (exact for the main cases), an Anthropic upstream's Message and stream read back into the canonical answer, and a
// failing stream ending in Anthropic's own error event.
import t from 'tap';
import type { CanonResponse } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { failingStream, requests, responses, streams } from './canonical-fixtures.ts';
import { sse } from '../adapters/helpers.ts';
import { ctxFor, decodeAll, encodeAll, grammarProblems, wireEvents } from './anthropic-messages-helpers.ts';

const ctx = ctxFor(requests.toolRoundTrip, 'claude-client');
const ZERO_CACHE = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
const usage = (input: number, output: number, extra: Record<string, unknown> = {}) =>
  ({ input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: ZERO_CACHE, output_tokens: output, ...extra });
const message = (id: string, content: unknown[], stop: string, u: unknown) =>
  ({ id, type: 'message', role: 'assistant', model: 'claude-client', content, stop_reason: stop, stop_sequence: null, usage: u });

/** The Message each fixture answer becomes for a client. */
const MESSAGES: Record<keyof typeof responses, unknown> = {
  text: message('msg_up-1', [{ type: 'text', text: 'Hi there!' }], 'end_turn', usage(12, 4)),
  cached: message('msg_up-2', [{ type: 'text', text: 'Cached.' }], 'end_turn', {
    input_tokens: 100, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000,
    cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 0 }, output_tokens: 3,
  }),
  toolCall: message('msg_up-3', [{ type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Paris' } }], 'tool_use', usage(40, 12)),
  parallelToolCalls: message('msg_up-4', [
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'call_p1', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'call_p2', name: 'get_weather', input: { city: 'Rome' } },
  ], 'tool_use', usage(45, 30)),
  cut: message('msg_up-5', [{ type: 'text', text: 'The answer is a long' }], 'max_tokens', usage(10, 5)),
  filtered: message('msg_up-6', [], 'refusal', usage(10, 0)),
  reasoning: message('msg_up-7', [
    { type: 'thinking', thinking: '17 * 23 = 391.', signature: 'sig-abc' },
    { type: 'text', text: '391' },
  ], 'end_turn', usage(20, 60, { output_tokens_details: { thinking_tokens: 50 } })),
};

t.test('every fixture answer: the exact Message a client gets, and the same Message read back from an Anthropic upstream', async (t) => {
  for (const [name, res] of Object.entries(responses) as [keyof typeof responses, CanonResponse][]) {
    const json = codec.encodeResponse(res, ctx);
    t.strictSame(json, MESSAGES[name], `${name}: encoded`);
    // As an upstream's answer: the id keeps its msg_ form and the model is the one that answered.
    t.strictSame(codec.decodeResponse(json, ctx), { ...res, id: `msg_${res.id}`, model: 'claude-client' }, `${name}: decoded back`);
  }
});

t.test('a real-shaped upstream Message (docs/wire-formats.md#anthropic-response): citations dropped, usage with cache added back, stop_sequence kept', async (t) => {
  const res = codec.decodeResponse({
    id: 'msg_01ABC', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929',
    content: [
      { type: 'text', text: 'Let me check.', citations: null },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use', stop_sequence: null,
    usage: { input_tokens: 412, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048, cache_creation: ZERO_CACHE, output_tokens: 57, service_tier: 'standard' },
  }, ctx);
  t.strictSame(res, {
    id: 'msg_01ABC', model: 'claude-sonnet-4-5-20250929', stop: 'tool_use',
    content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_call', id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    usage: { input: 2460, cacheRead: 2048, cacheWrite: 0, output: 57, reasoning: 0 },
  });
  const stopped = codec.decodeResponse({ ...MESSAGES.text as object, stop_reason: 'stop_sequence', stop_sequence: 'END' }, ctx);
  t.equal(stopped.stop, 'stop_sequence');
  t.equal(stopped.stopSequence, 'END');
  t.throws(() => codec.decodeResponse({ error: 'nope' }, ctx), { status: 502, code: 'upstream_invalid' }, 'not a Message: 502');
});

const frame = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

t.test('the text stream: exact frames, usage in message_start and cumulative in message_delta', async (t) => {
  const out = encodeAll(streams.text.events, ctx);
  t.equal(out, [
    frame('message_start', { message: {
      id: 'msg_up-1', type: 'message', role: 'assistant', model: 'claude-client', content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: ZERO_CACHE, output_tokens: 1 },
    } }),
    frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi ' } }),
    frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'there!' } }),
    frame('content_block_stop', { index: 0 }),
    frame('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4 } }),
    frame('message_stop', {}),
  ].join(''));
});

t.test('the tool call stream: input {} at the start, the arguments as input_json_delta fragments', async (t) => {
  const events = wireEvents(encodeAll(streams.toolCall.events, ctx)).map((e) => e.data);
  t.strictSame(events.slice(1, -2), [
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'call_9', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"ci' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'ty":"Par' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'is"}' } },
    { type: 'content_block_stop', index: 0 },
  ]);
  t.strictSame(events.at(-2), { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 12 } });
  t.equal(events[0].message.usage.input_tokens, 0, 'no input known at the start: 0 there, the count in message_delta');
});

t.test('interleaved parallel calls: one block open at a time, the later call buffered until the first ends', async (t) => {
  const events = wireEvents(encodeAll(streams.parallelToolCalls.events, ctx)).map((e) => e.data);
  t.strictSame(events.slice(1, -2), [
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me check.' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_p1', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_p2', name: 'get_weather', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":"Rome"}' } },
    { type: 'content_block_stop', index: 2 },
  ]);
});

t.test('the reasoning stream: thinking_delta then signature_delta (Anthropic\'s own signature, unwrapped)', async (t) => {
  const events = wireEvents(encodeAll(streams.reasoning.events, ctx)).map((e) => e.data);
  t.strictSame(events.slice(1, 6), [
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '17 * 23 ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '= 391.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-abc' } },
    { type: 'content_block_stop', index: 0 },
  ]);
  t.strictSame(events.at(-2).usage.output_tokens_details, { thinking_tokens: 50 });
});

t.test('every fixture stream: valid grammar, and decoded back it folds into the fixture\'s answer', async (t) => {
  for (const [name, { events, response }] of Object.entries(streams)) {
    const out = encodeAll(events, ctx);
    t.strictSame(grammarProblems(out), [], `${name}: grammar`);
    t.strictSame(collectEvents(decodeAll(out, ctx)), { ...response, id: `msg_${response.id}`, model: 'claude-client' }, `${name}: decoded`);
  }
});

t.test('the failing stream ends with Anthropic\'s error event, never message_delta or message_stop', async (t) => {
  const out = encodeAll(failingStream, ctx);
  const events = wireEvents(out);
  t.strictSame(events.at(-1), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
  t.notOk(events.some((e) => e.event === 'message_stop' || e.event === 'message_delta'));
  t.strictSame(grammarProblems(out), []);
  t.equal(codec.encodeStream(ctx).event(failingStream[3]), 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    'an error before anything else is the error event alone');

  const decoded = collectEvents(decodeAll(out, ctx));
  t.strictSame(decoded.error?.error, { status: 529, kind: 'overloaded', message: 'Overloaded', code: 'overloaded_error' }, 'read back as the failure');
  t.strictSame(decoded.content, [{ type: 'text', text: 'Partial' }]);
});

// A stream as Anthropic sends it (docs/wire-formats.md#anthropic-stream): spaced partial JSON starting with "", pings, signature_delta,
// cumulative message_delta usage with the input side, a redacted block and a server-tool block the gateway never asked for.
const UPSTREAM = sse([
  ['message_start', { type: 'message_start', message: { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: 'standard' } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
  ['ping', '{"type": "ping"}'],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Paris, so' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCkYIBxgCKkB' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }],
  ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"query": "x"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 2 }],
  ['content_block_start', { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} } }],
  ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: 'ris"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 3 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 30, cache_read_input_tokens: 100, output_tokens: 45 } }],
  ['message_stop', { type: 'message_stop' }],
]);

t.test('an Anthropic upstream stream decodes to the answer: signatures tagged, server blocks skipped, usage overwritten not added', async (t) => {
  const events = decodeAll(UPSTREAM, ctx);
  t.strictSame(events[0], { type: 'start', id: 'msg_01', model: 'claude-sonnet-4-5', usage: { input: 25, cacheRead: 0, cacheWrite: 0 } });
  t.strictSame(collectEvents(events), {
    id: 'msg_01', model: 'claude-sonnet-4-5', stop: 'tool_use',
    content: [
      { type: 'reasoning', text: 'Paris, so', signature: { format: 'anthropic-messages', value: 'EqQBCkYIBxgCKkB' } },
      { type: 'reasoning', text: '', redacted: { format: 'anthropic-messages', value: 'EmwKAhgBEgy3' } },
      { type: 'tool_call', id: 'toolu_01', name: 'get_weather', arguments: '{"city": "Paris"}' },
    ],
    usage: { input: 130, cacheRead: 100, cacheWrite: 0, output: 45, reasoning: 0 },
  });
});

t.test('an upstream stream cut before message_stop owes nothing: the bridge marks it failed', async (t) => {
  const cut = UPSTREAM.slice(0, UPSTREAM.indexOf('event: message_stop'));
  const events = decodeAll(cut, ctx);
  t.notOk(events.some((e) => e.type === 'finish' || e.type === 'error'));
  const failed = decodeAll(sse([
    ['message_start', { type: 'message_start', message: { id: 'msg_02', model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } }],
    ['error', { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }],
    ['message_stop', { type: 'message_stop' }],
  ]), ctx);
  t.strictSame(failed.at(-1), { type: 'error', error: { status: 429, kind: 'rate_limit', message: 'slow down', code: 'rate_limit_error' } }, 'error event, and nothing after it');

  const startInput = decodeAll(sse([
    ['message_start', { type: 'message_start', message: { id: 'msg_03', model: 'm', usage: {} } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_3', name: 'get_weather', input: { city: 'Rome' } } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 2 } }],
    ['message_stop', { type: 'message_stop' }],
  ]), ctx);
  t.strictSame(collectEvents(startInput).content, [{ type: 'tool_call', id: 'toolu_3', name: 'get_weather', arguments: '{"city":"Rome"}' }],
    'an input given whole in content_block_start (no input_json_delta) is the arguments');
});
