// The anthropic-messages adapter: usage (cache added back, message_delta overwrites), outcome, model rewrite, error envelopes, ping, list shape.
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { anthropicMessages as format } from '../../adapters/anthropic-messages/index.ts';
import { fakeCtx, framesOf, scan, schemaAccepts, sse } from './helpers.ts';

const start = (usage: Record<string, unknown>) => ['message_start', { type: 'message_start', message: {
  id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, stop_sequence: null, usage,
} }] as [string, unknown];
const delta = (usage: Record<string, unknown>) => ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }] as [string, unknown];
const body: Array<[string, unknown]> = [
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['ping', '{"type": "ping"}'],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' world' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
];
const stop: [string, unknown] = ['message_stop', { type: 'message_stop' }];

// The stream of docs/wire-formats.md#anthropic-stream.
const SPEC_STREAM = sse([start({ input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: 'standard' }), ...body, delta({ output_tokens: 12 }), stop]);

t.test('usage from a non-stream body: input adds cache reads and writes back', async (t) => {
  // The Message of docs/wire-formats.md#anthropic-response.
  t.strictSame(format.usageFromBody({ type: 'message', model: 'claude-sonnet-4-5-20250929', usage: {
    input_tokens: 412, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 57, service_tier: 'standard',
  } }), { input: 2460, cacheRead: 2048, cacheWrite: 0, output: 57, reasoning: 0 });
  t.strictSame(format.usageFromBody({ usage: { input_tokens: 10, cache_creation_input_tokens: 300, cache_read_input_tokens: 700, output_tokens: 90, output_tokens_details: { thinking_tokens: 60 } } }),
    { input: 1010, cacheRead: 700, cacheWrite: 300, output: 90, reasoning: 60 }, 'cache writes and the newer thinking tokens');
  t.equal(format.usageFromBody({ input_tokens: 2095 }), undefined, 'a count_tokens answer is not usage');
  t.strictSame(format.usageFromBody({ usage: {
    input_tokens: 10, cache_creation_input_tokens: 500, cache_read_input_tokens: 0, output_tokens: 5,
    cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 200 },
  } }), { input: 510, cacheRead: 0, cacheWrite: 500, cacheWrite1h: 200, output: 5, reasoning: 0 }, 'cache writes split by TTL: the 1-hour part');
});

t.test('the spec stream: message_delta output overwrites the provisional one, message_stop ends it', async (t) => {
  const { scanner, out } = scan(format, fakeCtx(), SPEC_STREAM);
  t.equal(out, SPEC_STREAM, 'relayed byte for byte, ping included');
  t.strictSame(scanner.usage(), { input: 25, cacheRead: 0, cacheWrite: 0, output: 12, reasoning: 0 }, '12, not 1 + 12');
  t.equal(scanner.terminal(), true);
  t.equal(scanner.error(), undefined);
});

t.test('every message_delta field overwrites, none adds, and null never erases', async (t) => {
  const upstream = sse([
    start({ input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 1 }),
    ...body,
    delta({ output_tokens: 20 }),
    delta({ output_tokens: 45, input_tokens: 12, cache_read_input_tokens: 1000, cache_creation_input_tokens: null, output_tokens_details: { thinking_tokens: 30 } }),
    stop,
  ]);
  const { scanner } = scan(format, fakeCtx(), upstream);
  t.strictSame(scanner.usage(), { input: 12 + 200 + 1000, cacheRead: 1000, cacheWrite: 200, output: 45, reasoning: 30 });
});

t.test('a stream\'s cache writes keep their TTL split from message_start', async (t) => {
  const upstream = sse([
    start({ input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 0, output_tokens: 1, cache_creation: { ephemeral_5m_input_tokens: 50, ephemeral_1h_input_tokens: 150 } }),
    ...body, delta({ output_tokens: 7 }), stop,
  ]);
  const { scanner } = scan(format, fakeCtx(), upstream);
  t.strictSame(scanner.usage(), { input: 210, cacheRead: 0, cacheWrite: 200, cacheWrite1h: 150, output: 7, reasoning: 0 });
});

t.test('before message_stop the stream is not terminal; usage so far is still known', async (t) => {
  const cut = SPEC_STREAM.slice(0, SPEC_STREAM.indexOf('event: message_stop'));
  const { scanner } = scan(format, fakeCtx(), cut);
  t.equal(scanner.terminal(), false);
  t.equal(scanner.usage()?.output, 12);
  const { scanner: empty } = scan(format, fakeCtx(), '');
  t.equal(empty.usage(), undefined, 'nothing seen, nothing metered');
});

t.test('event: error mid-stream is an error, not a finish', async (t) => {
  const upstream = sse([start({ input_tokens: 25, output_tokens: 1 }), ...body.slice(0, 3),
    ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: 'req_011' }]]);
  const { scanner, out } = scan(format, fakeCtx(), upstream);
  t.equal(out, upstream);
  t.equal(scanner.error(), 'Overloaded');
  t.equal(scanner.terminal(), false);
  t.equal(scanner.usage()?.input, 25);
});

t.test('an alias rewrites message_start.message.model only', async (t) => {
  const { scanner, out } = scan(format, fakeCtx({ model: 'claude-sonnet', upstreamModel: 'claude-sonnet-4-5-20250929' }), SPEC_STREAM);
  const before = framesOf(SPEC_STREAM);
  const after = framesOf(out);
  t.equal(after.length, before.length);
  t.equal(after[0].event, 'message_start');
  t.equal(JSON.parse(after[0].data).message.model, 'claude-sonnet');
  t.strictSame(JSON.parse(after[0].data).message.usage, JSON.parse(before[0].data).message.usage);
  t.strictSame(after.slice(1).map((f) => f.raw), before.slice(1).map((f) => f.raw));
  t.equal(scanner.usage()?.output, 12);

  const message: Record<string, unknown> = { type: 'message', model: 'claude-sonnet-4-5-20250929' };
  format.setModel(message, 'claude-sonnet');
  t.equal(message.model, 'claude-sonnet');
});

t.test('errors use the Anthropic envelope, typed by status, with the gateway code and request id', async (t) => {
  const cases: Array<[number, string]> = [[400, 'invalid_request_error'], [401, 'authentication_error'], [402, 'billing_error'],
    [403, 'permission_error'], [404, 'not_found_error'], [413, 'request_too_large'], [422, 'invalid_request_error'],
    [429, 'rate_limit_error'], [500, 'api_error'], [502, 'api_error'], [503, 'overloaded_error'], [504, 'timeout_error'],
    [529, 'overloaded_error'], [507, 'api_error']];
  for (const [status, type] of cases) {
    const err = new GatewayError(status, 'SOME_CODE', `status ${status}`);
    t.strictSame(format.errorBody(err, { id: 'req_9' }), { type: 'error', error: { type, message: `status ${status}`, code: 'SOME_CODE' }, request_id: 'req_9' }, `${status}`);
  }
});

t.test('a cut stream ends with event: error, which the same parser reads', async (t) => {
  for (const [status, type] of [[502, 'api_error'], [529, 'overloaded_error'], [429, 'rate_limit_error']] as const) {
    const frames = framesOf(format.streamError(new GatewayError(status, 'upstream_stream_truncated', 'The upstream stream ended before it completed')));
    t.equal(frames.length, 1);
    t.equal(frames[0].event, 'error');
    t.strictSame(JSON.parse(frames[0].data), { type: 'error', error: { type, message: 'The upstream stream ended before it completed', code: 'upstream_stream_truncated' } });
  }
});

t.test('ping keepalive, model list shape, request shape', async (t) => {
  t.equal(format.keepalive, 'event: ping\ndata: {"type": "ping"}\n\n');
  const [ping] = framesOf(format.keepalive!);
  t.equal(ping.event, 'ping');
  t.strictSame(JSON.parse(ping.data), { type: 'ping' });

  const models = [{ id: 'claude-haiku-4-5', owner: 'anthropic' }, { id: 'claude-sonnet-4-5', owner: 'anthropic' }];
  t.strictSame(format.modelList!(models), {
    data: [
      { type: 'model', id: 'claude-haiku-4-5', display_name: 'claude-haiku-4-5', created_at: '2024-01-01T00:00:00Z' },
      { type: 'model', id: 'claude-sonnet-4-5', display_name: 'claude-sonnet-4-5', created_at: '2024-01-01T00:00:00Z' },
    ],
    has_more: false, first_id: 'claude-haiku-4-5', last_id: 'claude-sonnet-4-5',
  });
  t.strictSame(format.modelList!([]), { data: [], has_more: false, first_id: null, last_id: null });
  t.strictSame(format.modelInfo!(models[1]), { type: 'model', id: 'claude-sonnet-4-5', display_name: 'claude-sonnet-4-5', created_at: '2024-01-01T00:00:00Z' });

  const messages = [{ role: 'user', content: 'Hi' }];
  t.ok(schemaAccepts(format, { model: 'claude-sonnet-4-5', max_tokens: 1024, messages, stream: true }));
  t.ok(schemaAccepts(format, { model: 'claude-sonnet-4-5', messages }), 'count_tokens bodies have no max_tokens');
  t.notOk(schemaAccepts(format, { model: 'claude-sonnet-4-5', max_tokens: 1024 }), 'messages are required');
  t.notOk(schemaAccepts(format, { model: 'claude-sonnet-4-5', max_tokens: '1024', messages }));
  t.notOk(schemaAccepts(format, { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: 'Hi' }));
  t.equal(format.isStream({ stream: true }, fakeCtx()), true);
  t.equal(format.isStream({}, fakeCtx()), false);
  t.equal(format.upstreamAuth, 'x-api-key');
});

t.test('model list upstream: Anthropic\'s pages walked with after_id while has_more', async (t) => {
  const list = format.modelListUpstream!;
  t.same([list.path, list.headers], ['/v1/models?limit=1000', { 'anthropic-version': '2023-06-01' }]);
  t.same(list.page({ data: [{ id: 'claude-a' }, { id: 'claude b' }], has_more: true, first_id: 'claude-a', last_id: 'claude-a' }),
    { ids: ['claude-a'], next: '/v1/models?limit=1000&after_id=claude-a' });
  t.same(list.page({ data: [{ id: 'claude-c' }], has_more: false, last_id: 'claude-c' }), { ids: ['claude-c'], next: undefined });
});
