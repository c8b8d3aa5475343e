// The chat codec against every canonical fixture: requests encoded to chat bodies and chat bodies decoded back, answers
// both ways, streams both ways (decoded streams fold into the fixture's answer), and the failing stream's error ending.
import t from 'tap';
import { codec } from '../../adapters/openai-chat/codec/index.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { SseParser } from '../../adapters/shared/sse.ts';
import type { CanonEvent, CanonRequest, CanonResponse, StreamDecoder, StreamEncoder } from '../../core/canonical.ts';
import { GatewayError } from '../../core/errors.ts';
import { sseData } from '../helpers/http.ts';
import { failingStream, requests, responses, streams } from './canonical-fixtures.ts';
import { chatBodies, CREATED, ctxFor, upstreamAnswers, upstreamStreams } from './openai-chat-fixtures.ts';

const decode = (body: Record<string, unknown>, op: 'generate' | 'count_tokens' = 'generate') =>
  codec.decodeRequest(structuredClone(body), op, { model: 'model-x', path: '/v1/chat/completions', query: '' });

/** Feeds SSE text to a decoder in small pieces, as a network would; then ends it. */
function decodeText(decoder: StreamDecoder, text: string, piece = 23): CanonEvent[] {
  const parser = new SseParser();
  const events: CanonEvent[] = [];
  for (let i = 0; i < text.length; i += piece) for (const f of parser.push(text.slice(i, i + piece))) events.push(...decoder.frame(f));
  return [...events, ...decoder.end()];
}

const encodeAll = (encoder: StreamEncoder, events: CanonEvent[]) => events.map((e) => encoder.event(e)).join('') + encoder.end();

/** The canonical answer a chat round trip can keep: chat carries no signatures. */
function withoutSignatures(res: CanonResponse): CanonResponse {
  return { ...res, content: res.content.map((b) => ('signature' in b ? (({ signature: _s, ...rest }) => rest)(b) : b)) as CanonResponse['content'] };
}

t.test('requests: every fixture encodes to its chat body exactly, and the chat body decodes back to the fixture', async (t) => {
  for (const [name, body] of Object.entries(chatBodies)) {
    const fixture = requests[name as keyof typeof chatBodies];
    const encoded = codec.encodeRequest(fixture, ctxFor(fixture));
    t.equal(encoded.path, '/v1/chat/completions', `${name}: path`);
    t.strictSame(encoded.body, body, `${name}: encodeRequest gives the chat body`);
    const decoded = decode(body);
    // Only the stream case differs: the usage the client asked for is remembered for the chat stream encoder.
    const expected = name === 'streamText' ? { ...fixture, extras: { 'openai-chat': { includeUsage: true } } } : fixture;
    t.strictSame(decoded, expected, `${name}: decodeRequest gives the canonical fixture`);
  }
});

t.test('requests: a stream without include_usage still asks the upstream for usage; the client\'s choice is kept apart', async (t) => {
  const decoded = decode({ model: 'm', messages: [{ role: 'user', content: 'Hello there' }], max_completion_tokens: 100, stream: true });
  t.strictSame(decoded, requests.streamText, 'no include_usage: extras stay empty, as in the fixture');
  t.strictSame(codec.encodeRequest(decoded, ctxFor(decoded)).body.stream_options, { include_usage: true }, 'usage forced upstream');
});

t.test('requests: count_tokens decodes; a chat upstream has no counter, so encoding one is refused', async (t) => {
  t.strictSame(decode({ model: 'model-x', messages: [{ role: 'user', content: 'Hello there' }] }, 'count_tokens'), requests.countTokens);
  t.throws(() => codec.encodeRequest(requests.countTokens, ctxFor(requests.countTokens)), GatewayError);
  t.equal(codec.countsTokens, false);
  t.strictSame(codec.encodeCount({ inputTokens: 42, estimated: true }, ctxFor(requests.countTokens)), { input_tokens: 42, estimated: true });
  t.strictSame(codec.encodeCount({ inputTokens: 7 }, ctxFor(requests.countTokens)), { input_tokens: 7, estimated: false });
  t.strictSame(codec.decodeCount({ input_tokens: 42, estimated: true }), { inputTokens: 42, estimated: true });
  t.strictSame(codec.decodeCount('nonsense'), { inputTokens: 0 });
});

t.test('responses: every fixture encodes to a chat.completion with the client model, mapped finish and OpenAI usage', async (t) => {
  const finish: Record<string, string> = { text: 'stop', cached: 'stop', toolCall: 'tool_calls', parallelToolCalls: 'tool_calls', cut: 'length', filtered: 'content_filter', reasoning: 'stop' };
  for (const [name, res] of Object.entries(responses)) {
    const before = Math.floor(Date.now() / 1000);
    const json = codec.encodeResponse(res, ctxFor(requests.text)) as Record<string, any>;
    t.match(json, { id: `chatcmpl-${res.id}`, object: 'chat.completion', model: 'client-model' }, `${name}: envelope`);
    t.ok(json.created >= before && json.created <= before + 1, `${name}: created is now when the upstream gave none`);
    t.equal(json.choices.length, 1);
    t.equal(json.choices[0].finish_reason, finish[name], `${name}: finish_reason`);
    t.equal(json.usage.prompt_tokens, res.usage.input, `${name}: prompt tokens include cached ones`);
    t.equal(json.usage.completion_tokens, res.usage.output);
    t.equal(json.usage.total_tokens, res.usage.input + res.usage.output);
    t.equal(json.usage.prompt_tokens_details.cached_tokens, res.usage.cacheRead);
    t.equal(json.usage.completion_tokens_details.reasoning_tokens, res.usage.reasoning);
  }
  t.strictSame(codec.encodeResponse({ ...responses.text, created: CREATED }, ctxFor(requests.text)), {
    id: 'chatcmpl-up-1', object: 'chat.completion', created: CREATED, model: 'client-model',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there!', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
  }, 'text: the exact object');
  const parallel = codec.encodeResponse(responses.parallelToolCalls, ctxFor(requests.text)) as Record<string, any>;
  t.strictSame(parallel.choices[0].message, {
    role: 'assistant', content: 'Let me check.', refusal: null, annotations: [],
    tool_calls: [
      { id: 'call_p1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_p2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
    ],
  }, 'parallel tool calls: text and both calls');
  const reasoning = codec.encodeResponse(responses.reasoning, ctxFor(requests.reasoning)) as Record<string, any>;
  t.equal(reasoning.choices[0].message.reasoning_content, '17 * 23 = 391.', 'reasoning shown in reasoning_content');
  t.notMatch(JSON.stringify(reasoning), /sig-abc/, 'the Anthropic signature never reaches a chat client');
  const cached = codec.encodeResponse(responses.cached, ctxFor(requests.text)) as Record<string, any>;
  t.strictSame(cached.usage.prompt_tokens_details, { cached_tokens: 1000, cache_write_tokens: 100 }, 'cache writes reported as relays do');
  const filtered = codec.encodeResponse(responses.filtered, ctxFor(requests.text)) as Record<string, any>;
  t.equal(filtered.choices[0].message.content, null, 'nothing said: content null');
});

t.test('responses: every chat upstream answer decodes to the fixture (signatures aside: chat carries none)', async (t) => {
  for (const [name, json] of Object.entries(upstreamAnswers)) {
    const res = responses[name as keyof typeof responses];
    t.strictSame(codec.decodeResponse(structuredClone(json), ctxFor(requests.toolRoundTrip)), { ...withoutSignatures(res), created: CREATED }, name);
  }
  t.throws(() => codec.decodeResponse('<html>', ctxFor(requests.text)), { name: 'GatewayError', status: 502 }, 'a non-answer is an upstream failure');
});

t.test('streams: the text stream, frame by frame, with and without include_usage', async (t) => {
  const withUsage = { ...requests.streamText, extras: { 'openai-chat': { includeUsage: true } } };
  const frames = (request: CanonRequest) => sseData(encodeAll(codec.encodeStream(ctxFor(request)), streams.text.events));
  const base = { id: 'chatcmpl-up-1', object: 'chat.completion.chunk', model: 'client-model' };
  const withU = frames(withUsage);
  t.equal(withU.at(-1), '[DONE]');
  const chunks = withU.slice(0, -1).map((f) => JSON.parse(f));
  t.match(chunks, [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: 'Hi ' }, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: { content: 'there!' }, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null },
    { ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } } },
  ]);
  t.equal(chunks.length, 5);
  t.equal(new Set(chunks.map((c) => c.created)).size, 1, 'one created across chunks');
  const without = frames(requests.streamText).slice(0, -1).map((f) => JSON.parse(f));
  t.equal(without.length, 4, 'no usage chunk when the client did not ask');
  t.ok(without.every((c) => !('usage' in c)), 'and no usage key at all');
});

t.test('streams: every fixture encodes to chunks that decode back into the fixture answer', async (t) => {
  const request = { ...requests.streamText, extras: { 'openai-chat': { includeUsage: true } } };
  for (const [name, { events, response }] of Object.entries(streams)) {
    const text = encodeAll(codec.encodeStream(ctxFor(request)), events);
    t.ok(text.endsWith('data: [DONE]\n\n'), `${name}: ends with [DONE]`);
    t.notMatch(text, /event:/, `${name}: no event lines`);
    const back = collectEvents(decodeText(codec.decodeStream(ctxFor(request)), text));
    t.match(back.created, Number);
    t.strictSame({ ...back, created: undefined }, { ...withoutSignatures(response), id: `chatcmpl-${response.id}`, model: 'client-model', created: undefined }, name);
  }
});

t.test('streams: tool calls one after the other (interleaved fragments held back), keyed by index counting tool calls only', async (t) => {
  // The openai SDK takes a call as complete when the next index starts (it parses the arguments then): OpenAI never
  // interleaves, so neither may a translated stream.
  const chunks = sseData(encodeAll(codec.encodeStream(ctxFor(requests.streamText)), streams.parallelToolCalls.events)).slice(0, -1).map((f) => JSON.parse(f));
  const deltas = chunks.map((c) => c.choices[0]?.delta);
  t.strictSame(deltas, [
    { role: 'assistant', content: '' },
    { content: 'Let me check.' },
    { tool_calls: [{ index: 0, id: 'call_p1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
    { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
    { tool_calls: [{ index: 1, id: 'call_p2', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
    { tool_calls: [{ index: 1, function: { arguments: '{"city":"Rome"}' } }] },
    {},
  ]);
  t.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
});

t.test('streams: every chat upstream stream decodes into the fixture answer', async (t) => {
  for (const [name, text] of Object.entries(upstreamStreams)) {
    const { response } = streams[name];
    for (const piece of [1, 7, 64, 100_000]) {
      const back = collectEvents(decodeText(codec.decodeStream(ctxFor(requests.toolRoundTrip)), text, piece));
      t.strictSame(back, { ...withoutSignatures(response), created: CREATED }, `${name} in pieces of ${piece}`);
    }
  }
});

t.test('streams: the failing stream ends with chat\'s own error chunk, never [DONE]', async (t) => {
  const encoder = codec.encodeStream(ctxFor(requests.streamText));
  const text = failingStream.map((e) => encoder.event(e)).join('');
  const tail = encoder.end();
  t.equal(tail, '', 'nothing owed after the error');
  const frames = sseData(text + tail);
  t.notOk(frames.includes('[DONE]'));
  t.notMatch(text, /finish_reason":"/, 'no finish chunk');
  t.strictSame(JSON.parse(frames.at(-1)!), { error: { message: 'Overloaded', type: 'server_error', param: null, code: null } });
  t.equal(encoder.event({ type: 'finish', stop: 'end' }), '', 'nothing after the error');
});

t.test('streams: an upstream error chunk mid-stream decodes to an error event, and nothing after it counts', async (t) => {
  const decoder = codec.decodeStream(ctxFor(requests.streamText));
  const text = upstreamStreams.text.split('\n\n').slice(0, 2).join('\n\n') + '\n\n'
    + 'data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}\n\n'
    + upstreamStreams.text.split('\n\n').slice(2).join('\n\n');
  const collected = collectEvents(decodeText(decoder, text));
  t.strictSame(collected.error, { type: 'error', error: { status: 500, kind: 'server', message: 'The server had an error' } });
  t.strictSame(collected.content, [{ type: 'text', text: 'Hi ' }], 'what came before it is kept');
  const events = decodeText(codec.decodeStream(ctxFor(requests.streamText)), text);
  t.notOk(events.some((e) => e.type === 'finish'), 'no finish after an error');
});
