// The official @anthropic-ai/sdk reads what the codec's client side writes: Messages, event streams through
// messages.stream().finalMessage() (tool input accumulated from input_json_delta only), error envelopes, the stream's
// error event and count_tokens, served by a local HTTP server that answers with the codec's output.
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import type { CanonEvent, CanonRequest } from '../../core/canonical.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { failingStream, requests, responses, streams } from './canonical-fixtures.ts';
import { ctxFor, encodeAll } from './anthropic-messages-helpers.ts';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
let answer: Answer = (_req, res) => res.end();
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => answer(req, res));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
const client = new Anthropic({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const stream = (text: string): Answer => (_req, res) => {
  res.writeHead(200, { 'content-type': codec.streamContentType(requests.streamText), 'cache-control': 'no-cache' });
  // Written in small pieces, as a network would deliver it.
  for (let i = 0; i < text.length; i += 37) res.write(text.slice(i, i + 37));
  res.end();
};

// claude-haiku-4-5: the SDK warns on every request naming claude-sonnet-4-5 (deprecated).
const ctx = ctxFor(requests.toolRoundTrip, 'claude-haiku-4-5');
const params = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
const sdkUsage = (input: number, output: number) => ({ input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output });

t.test('messages.create: text, tool_use with its input object, the usage in Anthropic\'s terms', async (t) => {
  answer = json(200, codec.encodeResponse(responses.text, ctx));
  const text = await client.messages.create(params);
  t.equal(text.id, 'msg_up-1');
  t.equal(text.model, 'claude-haiku-4-5');
  t.strictSame(text.content, [{ type: 'text', text: 'Hi there!' }]);
  t.equal(text.stop_reason, 'end_turn');
  t.match(text.usage, sdkUsage(12, 4));

  answer = json(200, codec.encodeResponse(responses.parallelToolCalls, ctx));
  const tools = await client.messages.create(params);
  t.strictSame(tools.content.filter((b) => b.type === 'tool_use').map((b) => b.type === 'tool_use' && b.input), [{ city: 'Paris' }, { city: 'Rome' }]);
  t.equal(tools.stop_reason, 'tool_use');

  answer = json(200, codec.encodeResponse(responses.cached, ctx));
  t.match((await client.messages.create(params)).usage, { input_tokens: 100, cache_read_input_tokens: 1000, cache_creation_input_tokens: 100, output_tokens: 3 },
    'input_tokens excludes cache reads and writes');
});

const finalOf = async (events: CanonEvent[], req: CanonRequest = requests.toolRoundTrip) => {
  answer = stream(encodeAll(events, ctxFor(req, 'claude-haiku-4-5')));
  const s = client.messages.stream(params);
  const seen: string[] = [];
  s.on('streamEvent', (e) => seen.push(e.type));
  return { message: await s.finalMessage(), seen };
};

t.test('messages.stream().finalMessage(): text, and usage from message_start overwritten by message_delta', async (t) => {
  const { message, seen } = await finalOf(streams.text.events);
  t.strictSame(message.content, [{ type: 'text', text: 'Hi there!' }]);
  t.equal(message.stop_reason, 'end_turn');
  t.match(message.usage, sdkUsage(12, 4));
  t.equal(seen[0], 'message_start');
  t.equal(seen.at(-1), 'message_stop');
});

t.test('a streamed tool call: the SDK accumulates the input from input_json_delta fragments', async (t) => {
  const { message } = await finalOf(streams.toolCall.events);
  t.strictSame(message.content, [{ type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Paris' } }]);
  t.equal(message.stop_reason, 'tool_use');
  t.match(message.usage, sdkUsage(40, 12), 'input known only at the end: message_delta brings it');
});

t.test('interleaved parallel calls reach the SDK as whole blocks in order (no "content block not found")', async (t) => {
  const { message } = await finalOf(streams.parallelToolCalls.events);
  t.strictSame(message.content, [
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'call_p1', name: 'get_weather', input: { city: 'Paris' } },
    { type: 'tool_use', id: 'call_p2', name: 'get_weather', input: { city: 'Rome' } },
  ]);
});

t.test('thinking with its signature, and a cut answer', async (t) => {
  const { message } = await finalOf(streams.reasoning.events);
  t.strictSame(message.content, [{ type: 'thinking', thinking: '17 * 23 = 391.', signature: 'sig-abc' }, { type: 'text', text: '391' }]);
  const cut = await finalOf(streams.cut.events);
  t.equal(cut.message.stop_reason, 'max_tokens');
});

t.test('a freeform tool call reaches the SDK as the {input} object its declaration takes, escapes intact', async (t) => {
  const raw = '*** Begin Patch\n*** Add File: a.txt\n+say "hi"\\n\n*** End Patch';
  const { message } = await finalOf([
    { type: 'start', id: 'up-c', model: 'm' },
    { type: 'block_start', index: 0, block: { type: 'tool_call', id: 'call_c', name: 'apply_patch', custom: true } },
    { type: 'delta', index: 0, arguments: raw.slice(0, 20) },
    { type: 'delta', index: 0, arguments: raw.slice(20) },
    { type: 'block_end', index: 0 },
    { type: 'finish', stop: 'tool_use', usage: { input: 5, cacheRead: 0, cacheWrite: 0, output: 9, reasoning: 0 } },
  ]);
  t.strictSame(message.content, [{ type: 'tool_use', id: 'call_c', name: 'apply_patch', input: { input: raw } }]);
});

t.test('a failure after the stream began: the SDK throws the error event\'s type', async (t) => {
  answer = stream(encodeAll(failingStream, ctx));
  const s = client.messages.stream(params);
  const texts: string[] = [];
  s.on('text', (delta) => texts.push(delta));
  const err = await s.finalMessage().then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof Anthropic.APIError, 'an APIError');
  t.equal((err as InstanceType<typeof Anthropic.APIError>).type, 'overloaded_error');
  t.match((err as Error).message, /Overloaded/);
  t.strictSame(texts, ['Partial'], 'the text before the failure was delivered');
});

t.test('error envelopes: the SDK\'s own error classes, status, type and retry-after', async (t) => {
  const cases = [
    { err: { status: 429, kind: 'rate_limit', message: 'Slow down', retryAfter: '7' }, cls: Anthropic.RateLimitError, status: 429, type: 'rate_limit_error' },
    { err: { status: 503, kind: 'overloaded', message: 'Model overloaded' }, cls: Anthropic.InternalServerError, status: 529, type: 'overloaded_error' },
    { err: { status: 400, kind: 'invalid_request', message: 'messages.0: bad' }, cls: Anthropic.BadRequestError, status: 400, type: 'invalid_request_error' },
    { err: { status: 401, kind: 'authentication', message: 'no' }, cls: Anthropic.AuthenticationError, status: 401, type: 'authentication_error' },
    { err: { status: 504, kind: 'timeout', message: 'late' }, cls: Anthropic.InternalServerError, status: 504, type: 'timeout_error' },
  ] as const;
  for (const c of cases) {
    const out = codec.encodeError(c.err);
    answer = json(out.status, out.body, out.headers);
    const err = await client.messages.create(params).then(() => undefined, (e: unknown) => e) as InstanceType<typeof Anthropic.APIError>;
    t.ok(err instanceof c.cls, `${c.type}: ${c.cls.name}`);
    t.equal(err.status, c.status);
    t.equal(err.type, c.type);
    t.equal(err.apiMessage, c.err.message);
    if ('retryAfter' in c.err) t.equal(err.headers?.get('retry-after'), c.err.retryAfter);
  }
});

t.test('count_tokens: input_tokens as the SDK reads it', async (t) => {
  answer = json(200, codec.encodeCount({ inputTokens: 2095 }, ctxFor(requests.countTokens)));
  t.strictSame(await client.messages.countTokens({ model: 'claude-haiku-4-5', messages: params.messages }), { input_tokens: 2095 });
});
