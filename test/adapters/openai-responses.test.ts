// The openai-responses adapter: usage (body and terminal events), outcome detection, model rewrite, errors and the synthesized failure.
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { openaiResponses as format } from '../../adapters/openai-responses/index.ts';
import { responsesStreamError } from '../../adapters/openai-responses/stream.ts';
import { fakeCtx, framesOf, scan, schemaAccepts, sse } from './helpers.ts';

const USAGE = { input_tokens: 36, input_tokens_details: { cached_tokens: 0 }, output_tokens: 87, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 123 };
const CACHED_REASONING = { input_tokens: 2000, input_tokens_details: { cached_tokens: 1536 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 256 }, total_tokens: 2300 };

const response = (status: string, usage: unknown, extra: Record<string, unknown> = {}) =>
  ({ id: 'resp_01', object: 'response', created_at: 1767225600, status, model: 'gpt-5-2025-08-07', output: [], usage, ...extra });

// The canonical text answer of docs/wire-formats.md#responses-stream, ending with the given terminal event.
function textStream(terminal: string, terminalResponse: unknown): string {
  return sse([
    ['response.created', { type: 'response.created', sequence_number: 0, response: response('in_progress', null) }],
    ['response.in_progress', { type: 'response.in_progress', sequence_number: 1, response: response('in_progress', null) }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }],
    ['response.content_part.added', { type: 'response.content_part.added', sequence_number: 3, item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi', logprobs: [], obfuscation: 'x9' }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 5, item_id: 'msg_1', output_index: 0, content_index: 0, delta: ' there!', logprobs: [] }],
    ['response.output_text.done', { type: 'response.output_text.done', sequence_number: 6, item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hi there!', logprobs: [] }],
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item: { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there!', annotations: [] }] } }],
    [terminal, { type: terminal, sequence_number: 8, response: terminalResponse }],
  ]);
}

t.test('usage from a non-stream body: cached tokens stay inside input, reasoning inside output', async (t) => {
  t.strictSame(format.usageFromBody(response('completed', USAGE)), { input: 36, cacheRead: 0, cacheWrite: 0, output: 87, reasoning: 0 });
  t.strictSame(format.usageFromBody({ usage: CACHED_REASONING }), { input: 2000, cacheRead: 1536, cacheWrite: 0, output: 300, reasoning: 256 });
  t.strictSame(format.usageFromBody({ usage: { ...CACHED_REASONING, input_tokens_details: { cached_tokens: 1536, cache_write_tokens: 64 } } }),
    { input: 2000, cacheRead: 1536, cacheWrite: 64, output: 300, reasoning: 256 }, 'the newer cache_write_tokens');
  t.equal(format.usageFromBody({ object: 'response.input_tokens', input_tokens: 12 }), undefined, 'input_tokens counting is not usage');
  t.equal(format.usageFromBody(response('in_progress', null)), undefined);
});

t.test('a completed stream: usage from response.completed, terminal, bytes relayed untouched', async (t) => {
  const upstream = textStream('response.completed', response('completed', CACHED_REASONING));
  const { scanner, out } = scan(format, fakeCtx(), upstream);
  t.equal(out, upstream, 'nothing rewritten without an alias');
  t.strictSame(scanner.usage(), { input: 2000, cacheRead: 1536, cacheWrite: 0, output: 300, reasoning: 256 });
  t.equal(scanner.terminal(), true);
  t.equal(scanner.error(), undefined);
});

t.test('incomplete and failed are terminal too, and carry usage; failed is an error', async (t) => {
  const incomplete = scan(format, fakeCtx(), textStream('response.incomplete', response('incomplete', USAGE, { incomplete_details: { reason: 'max_output_tokens' } }))).scanner;
  t.equal(incomplete.terminal(), true);
  t.equal(incomplete.error(), undefined);
  t.strictSame(incomplete.usage(), { input: 36, cacheRead: 0, cacheWrite: 0, output: 87, reasoning: 0 });

  const failed = scan(format, fakeCtx(), textStream('response.failed', response('failed', USAGE, { error: { code: 'server_error', message: 'The model crashed' } }))).scanner;
  t.equal(failed.terminal(), true);
  t.equal(failed.error(), 'The model crashed');
  t.strictSame(failed.usage(), { input: 36, cacheRead: 0, cacheWrite: 0, output: 87, reasoning: 0 });

  const done = scan(format, fakeCtx(), textStream('response.done', response('completed', USAGE))).scanner;
  t.equal(done.terminal(), true, 'the Codex backends\' response.done ends a stream too');
});

t.test('a stream cut before its terminal event is neither terminal nor metered', async (t) => {
  const upstream = textStream('response.completed', response('completed', USAGE));
  const cut = upstream.slice(0, upstream.indexOf('event: response.completed'));
  const { scanner } = scan(format, fakeCtx(), cut);
  t.equal(scanner.terminal(), false);
  t.equal(scanner.usage(), undefined);
  t.equal(scanner.error(), undefined);
});

t.test('error events, flat (spec) and nested (observed), are errors and not terminal', async (t) => {
  const head = textStream('response.completed', USAGE).split('event: response.output_item.added')[0];
  const flat = scan(format, fakeCtx(), head + sse([['error', { type: 'error', code: 'server_error', message: 'Flat failure', param: null, sequence_number: 2 }]])).scanner;
  t.equal(flat.error(), 'Flat failure');
  t.equal(flat.terminal(), false);
  const nested = scan(format, fakeCtx(), head + sse([['error', { type: 'error', sequence_number: 2, error: { type: 'too_many_requests', code: 'too_many_requests', message: 'Nested failure', param: null } }]])).scanner;
  t.equal(nested.error(), 'Nested failure');
});

t.test('frames without event lines and a trailing [DONE] are understood', async (t) => {
  const upstream = textStream('response.completed', response('completed', USAGE)).replace(/^event: .*\n/gm, '') + 'data: [DONE]\n\n';
  const { scanner, out } = scan(format, fakeCtx(), upstream);
  t.equal(out, upstream);
  t.equal(scanner.terminal(), true);
  t.equal(scanner.usage()?.output, 87);
});

t.test('an alias rewrites response.model in lifecycle events and leaves the rest byte-identical', async (t) => {
  const ctx = fakeCtx({ model: 'gpt-5', upstreamModel: 'gpt-5-2025-08-07' });
  const upstream = textStream('response.completed', response('completed', USAGE));
  const { scanner, out } = scan(format, ctx, upstream);
  const before = framesOf(upstream);
  const after = framesOf(out);
  t.equal(after.length, before.length);
  for (const [i, frame] of after.entries()) {
    t.equal(frame.event, before[i].event);
    const data = JSON.parse(frame.data);
    if (data.response) t.equal(data.response.model, 'gpt-5', `${frame.event} names the client's model`);
    else t.equal(frame.raw, before[i].raw, `${frame.event} untouched`);
  }
  t.equal(scanner.usage()?.input, 36, 'usage still read from a rewritten frame');

  const body = response('completed', USAGE);
  format.setModel(body, 'gpt-5');
  t.equal(body.model, 'gpt-5');
});

t.test('errors use the OpenAI envelope', async (t) => {
  const cases: Array<[number, string]> = [[400, 'invalid_request_error'], [401, 'invalid_request_error'], [403, 'permission_error'],
    [404, 'invalid_request_error'], [429, 'rate_limit_error'], [500, 'server_error'], [502, 'upstream_error'], [504, 'timeout_error']];
  for (const [status, type] of cases) {
    const err = new GatewayError(status, 'some_code', `status ${status}`, { param: 'previous_response_id' });
    t.strictSame(format.errorBody(err, { id: 'r1' }), { error: { message: `status ${status}`, type, param: 'previous_response_id', code: 'some_code' } });
  }
});

t.test('a cut stream ends with a response.failed event the same parser reads', async (t) => {
  const err = new GatewayError(502, 'upstream_stream_truncated', 'The upstream stream ended before it completed');
  const [alone] = framesOf(format.streamError(err));
  t.equal(alone.event, 'response.failed');
  t.strictSame(JSON.parse(alone.data), {
    type: 'response.failed', sequence_number: 2_147_483_647,
    response: { object: 'response', status: 'failed', error: { code: 'upstream_stream_truncated', message: 'The upstream stream ended before it completed' }, usage: null },
  });

  t.equal(format.streamError, responsesStreamError);
  // Given the request's context, it continues the stream's own response id and sequence numbers its scanner saw.
  const ctx = fakeCtx();
  const upstream = textStream('response.completed', response('completed', USAGE));
  scan(format, ctx, upstream.slice(0, upstream.indexOf('event: response.output_item.done')));
  const [continued] = framesOf(responsesStreamError(err, ctx));
  const data = JSON.parse(continued.data);
  t.equal(data.sequence_number, 7, 'one past the last event seen (6)');
  t.equal(data.response.id, 'resp_01');
  t.equal(data.response.status, 'failed');
});

t.test('request shape, stream flag, keepalive, model list', async (t) => {
  t.equal(format.isStream({ stream: true }, fakeCtx()), true);
  t.equal(format.isStream({ stream: 'true' }, fakeCtx()), false);
  t.equal(format.isStream(undefined, fakeCtx()), false);
  t.ok(schemaAccepts(format, { model: 'gpt-5', input: 'Hi' }));
  t.ok(schemaAccepts(format, { model: 'gpt-5', input: [{ role: 'user', content: 'Hi' }], stream: true }));
  t.ok(schemaAccepts(format, { model: 'gpt-5', previous_response_id: 'resp_1' }), 'input is optional');
  t.notOk(schemaAccepts(format, { model: 'gpt-5', input: 42 }));
  t.notOk(schemaAccepts(format, { model: 'gpt-5', input: 'Hi', stream: 'yes' }));
  t.equal(format.keepalive, ': keepalive\n\n');
  t.strictSame(framesOf(format.keepalive!).map((f) => f.data), [''], 'a comment: no data');
  t.strictSame(format.modelList!([{ id: 'gpt-5', owner: 'openai' }]), { object: 'list', data: [{ id: 'gpt-5', object: 'model', created: 1704067200, owned_by: 'openai' }] });
  t.strictSame(format.modelInfo!({ id: 'gpt-5', owner: 'openai' }), { id: 'gpt-5', object: 'model', created: 1704067200, owned_by: 'openai' });
  t.strictSame(format.model, { body: 'model' });
  t.equal(format.upstreamAuth, 'bearer');
});
