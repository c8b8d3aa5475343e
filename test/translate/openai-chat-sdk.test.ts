// The official openai SDK reads what the chat codec's client side writes: a local server answers the SDK's own requests
// (decoded by the codec) with encodeResponse JSON, encodeStream frames and encodeError envelopes, and the SDK's objects
// and stream accumulators (finalChatCompletion, tool-call argument events, parse) must come out right.
import t, { type Test } from 'tap';
import OpenAI from 'openai';
import { codec } from '../../adapters/openai-chat/codec/index.ts';
import type { CanonError, CanonEvent, CanonResponse } from '../../core/canonical.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { failingStream, responses, streams, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { ctxFor } from './openai-chat-fixtures.ts';

const usage = (input: number, output: number) => ({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 });

/** Answers beyond the shared fixtures: structured JSON text, and a custom (freeform) tool call. */
const extraAnswers: Record<string, CanonResponse> = {
  structured: { id: 'up-s', model: 'model-x', content: [{ type: 'text', text: '{"name":"Paris"}' }], stop: 'end', usage: usage(9, 6) },
  custom: { id: 'up-c', model: 'model-x', content: [{ type: 'tool_call', id: 'call_c', name: 'apply_patch', arguments: '*** Begin Patch', custom: true }], stop: 'tool_use', usage: usage(9, 6) },
};
const extraStreams: Record<string, CanonEvent[]> = {
  failing: failingStream,
  custom: [
    { type: 'start', id: 'up-c', model: 'model-x' },
    { type: 'block_start', index: 0, block: { type: 'tool_call', id: 'call_c', name: 'apply_patch', custom: true } },
    { type: 'delta', index: 0, arguments: '*** Begin ' },
    { type: 'delta', index: 0, arguments: 'Patch' },
    { type: 'block_end', index: 0 },
    { type: 'finish', stop: 'tool_use', usage: usage(9, 6) },
  ],
};
const errors: Record<string, CanonError> = {
  rate_limit: { status: 429, kind: 'rate_limit', message: 'Slow down', retryAfter: '0' },
  billing: { status: 402, kind: 'billing', message: 'Credit exhausted' },
  overloaded: { status: 529, kind: 'overloaded', message: 'Overloaded' },
  invalid: { status: 400, kind: 'invalid_request', message: 'messages.0.content: bad', code: 'invalid_value' },
};

/** A server that answers every chat request as the codec's client side would: the scenario is named by the model. */
async function sdkFor(t: Test) {
  const up = await startUpstream(t, (req, res, exchange) => {
    const body = JSON.parse(exchange.body) as Record<string, unknown>;
    const request = codec.decodeRequest(body, 'generate', { model: 'model-x', path: req.url ?? '', query: '' });
    const ctx = ctxFor(request, body.model as string);
    const [kind, name] = (body.model as string).split(':');
    if (kind === 'error') {
      const err = codec.encodeError(errors[name]);
      res.writeHead(err.status, { 'content-type': 'application/json', ...err.headers });
      res.end(JSON.stringify(err.body));
    } else if (kind === 'json') {
      const answer = responses[name as keyof typeof responses] ?? extraAnswers[name];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(codec.encodeResponse(answer, ctx)));
    } else {
      const encoder = codec.encodeStream(ctx);
      res.writeHead(200, { 'content-type': codec.streamContentType(request), 'cache-control': 'no-cache' });
      for (const event of streams[name]?.events ?? extraStreams[name]) res.write(encoder.event(event));
      res.end(encoder.end());
    }
  });
  return { client: new OpenAI({ apiKey: 'test-key', baseURL: `${up.url}/v1`, maxRetries: 0 }), exchanges: up.exchanges };
}

const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER_SCHEMA, strict: true } };

t.test('whole answers: text, tool calls, usage and finish reason as the SDK reads them', async (t) => {
  const { client } = await sdkFor(t);
  const text = await client.chat.completions.create({ model: 'json:text', messages });
  t.equal(text.object, 'chat.completion');
  t.equal(text.model, 'json:text', 'the client model name');
  t.equal(text.choices[0].message.content, 'Hi there!');
  t.equal(text.choices[0].finish_reason, 'stop');
  t.match(text.usage, { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
  const cached = await client.chat.completions.create({ model: 'json:cached', messages });
  t.equal(cached.usage?.prompt_tokens_details?.cached_tokens, 1000);
  const calls = await client.chat.completions.create({ model: 'json:parallelToolCalls', messages, tools: [weather] });
  const message = calls.choices[0].message;
  t.equal(calls.choices[0].finish_reason, 'tool_calls');
  t.equal(message.content, 'Let me check.');
  t.strictSame(message.tool_calls?.map((c) => c.type === 'function' && [c.id, c.function.name, JSON.parse(c.function.arguments)]), [
    ['call_p1', 'get_weather', { city: 'Paris' }], ['call_p2', 'get_weather', { city: 'Rome' }],
  ]);
  const cut = await client.chat.completions.create({ model: 'json:cut', messages });
  t.equal(cut.choices[0].finish_reason, 'length');
  const filtered = await client.chat.completions.create({ model: 'json:filtered', messages });
  t.equal(filtered.choices[0].finish_reason, 'content_filter');
});

t.test('whole answers: parse() gives the structured output and the strict tool call parsed', async (t) => {
  const { client } = await sdkFor(t);
  const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false };
  const parsed = await client.chat.completions.parse({
    model: 'json:structured', messages, response_format: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } },
  });
  t.strictSame(parsed.choices[0].message.parsed, { name: 'Paris' });
  const tool = await client.chat.completions.parse({ model: 'json:toolCall', messages, tools: [weather] });
  const call = tool.choices[0].message.tool_calls![0]!;
  t.equal(call.type, 'function');
  if (call.type === 'function') t.strictSame(call.function.parsed_arguments, { city: 'Paris' });
  const custom = await client.chat.completions.create({ model: 'json:custom', messages, tools: [{ type: 'custom', custom: { name: 'apply_patch' } }] });
  t.strictSame(custom.choices[0].message.tool_calls, [{ id: 'call_c', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }], 'a custom tool call');
});

t.test('streams: finalChatCompletion with and without include_usage', async (t) => {
  const { client, exchanges } = await sdkFor(t);
  const withUsage = client.chat.completions.stream({ model: 'stream:text', messages, stream_options: { include_usage: true } });
  const chunks: unknown[] = [];
  withUsage.on('chunk', (c) => chunks.push(c));
  const final = await withUsage.finalChatCompletion();
  t.equal(final.choices[0].message.content, 'Hi there!');
  t.equal(final.choices[0].message.role, 'assistant');
  t.equal(final.choices[0].finish_reason, 'stop');
  t.match(final.usage, { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
  t.equal(chunks.length, 5, 'role, two deltas, finish, usage');
  t.equal(JSON.parse(exchanges[0].body).stream_options.include_usage, true, 'the SDK did ask for usage');
  const without = await client.chat.completions.stream({ model: 'stream:text', messages }).finalChatCompletion();
  t.equal(without.choices[0].message.content, 'Hi there!');
  t.equal(without.usage, undefined, 'no usage unless asked');
  const cut = await client.chat.completions.stream({ model: 'stream:cut', messages }).finalChatCompletion();
  t.equal(cut.choices[0].finish_reason, 'length');
});

t.test('streams: tool calls accumulated by the SDK, interleaved parallel fragments included, arguments parsed', async (t) => {
  const { client } = await sdkFor(t);
  const one = client.chat.completions.stream({ model: 'stream:toolCall', messages, tools: [weather], stream_options: { include_usage: true } });
  const done: unknown[] = [];
  one.on('tool_calls.function.arguments.done', (e) => done.push(e.parsed_arguments));
  const final = await one.finalChatCompletion();
  const call = final.choices[0].message.tool_calls![0]!;
  t.equal(final.choices[0].finish_reason, 'tool_calls');
  t.equal(call.id, 'call_9');
  if (call.type === 'function') {
    t.equal(call.function.name, 'get_weather');
    t.strictSame(call.function.parsed_arguments, { city: 'Paris' });
  }
  t.strictSame(done, [{ city: 'Paris' }], 'the arguments.done event carries the parsed arguments');
  t.match(final.usage, { prompt_tokens: 40, completion_tokens: 12 });
  const two = await client.chat.completions.stream({ model: 'stream:parallelToolCalls', messages, tools: [weather] }).finalChatCompletion();
  t.equal(two.choices[0].message.content, 'Let me check.');
  t.strictSame(two.choices[0].message.tool_calls!.map((c) => c.type === 'function' && [c.id, c.function.parsed_arguments]), [
    ['call_p1', { city: 'Paris' }], ['call_p2', { city: 'Rome' }],
  ]);
  const custom = await client.chat.completions.stream({ model: 'stream:custom', messages, tools: [{ type: 'custom', custom: { name: 'apply_patch' } }] }).finalChatCompletion();
  t.strictSame(custom.choices[0].message.tool_calls, [{ id: 'call_c', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } }], 'a streamed custom tool call');
});

t.test('streams: reasoning_content deltas reach a client that reads them', async (t) => {
  const { client } = await sdkFor(t);
  const stream = await client.chat.completions.create({ model: 'stream:reasoning', messages, stream: true });
  let reasoning = '';
  let content = '';
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
    reasoning += delta?.reasoning_content ?? '';
    content += delta?.content ?? '';
  }
  t.equal(reasoning, '17 * 23 = 391.');
  t.equal(content, '391');
});

/** The error a call rejects with (the test fails if it resolves). */
async function failure(t: Test, call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  t.fail('expected the call to fail');
  return undefined;
}

t.test('a stream that fails after it began makes the SDK throw, with the error\'s message', async (t) => {
  const { client } = await sdkFor(t);
  const final = await failure(t, client.chat.completions.stream({ model: 'stream:failing', messages }).finalChatCompletion());
  t.match(final, { message: /Overloaded/ });
  const stream = await client.chat.completions.create({ model: 'stream:failing', messages, stream: true });
  let text = '';
  const iterated = await failure(t, (async () => { for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''; })());
  t.ok(iterated instanceof OpenAI.APIError, 'an APIError');
  t.match(iterated, { message: /Overloaded/, error: { type: 'server_error' } });
  t.equal(text, 'Partial', 'what came before the failure was delivered');
});

t.test('errors: the SDK raises its own classes with the envelope\'s type and code', async (t) => {
  const { client } = await sdkFor(t);
  const call = (name: string) => failure(t, client.chat.completions.create({ model: `error:${name}`, messages }));
  const limited = await call('rate_limit');
  t.ok(limited instanceof OpenAI.RateLimitError, 'RateLimitError');
  t.match(limited, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: /Slow down/ });
  t.match(await call('billing'), { status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message: /Credit exhausted/ });
  const overloaded = await call('overloaded');
  t.ok(overloaded instanceof OpenAI.InternalServerError, 'InternalServerError');
  t.match(overloaded, { status: 503, type: 'server_error' });
  const invalid = await call('invalid');
  t.ok(invalid instanceof OpenAI.BadRequestError, 'BadRequestError');
  t.match(invalid, { status: 400, type: 'invalid_request_error', code: 'invalid_value', message: /messages\.0\.content: bad/ });
});
