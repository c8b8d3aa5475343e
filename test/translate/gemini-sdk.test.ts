// The official @google/genai SDK reads what the Gemini codec's client side writes (answers, SSE streams through
// generateContentStream, counts, error envelopes and a stream's error frame), served by a local HTTP server that answers
// with the codec's output; and what the SDK itself sends decodes into the canonical request.
import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type } from '@google/genai';
import type { CanonEvent } from '../../core/canonical.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { failingStream, requests, responses, streams } from './canonical-fixtures.ts';
import { clientRequest, ctxFor, encodeAll } from './gemini-helpers.ts';

type Answer = (res: ServerResponse) => void;
let answer: Answer = (res) => res.end();
let seen: { path: string; query: string; body: Record<string, unknown> } | undefined;
const server = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const [path, query = ''] = (req.url ?? '').split('?');
    seen = { path, query, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') };
    answer(res);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const stream = (text: string): Answer => (res) => {
  res.writeHead(200, { 'content-type': codec.streamContentType(clientRequest(requests.streamText)) });
  // Written in small pieces, as a network would deliver it.
  for (let i = 0; i < text.length; i += 29) res.write(text.slice(i, i + 29));
  res.end();
};

const MODEL = 'gemini-2.5-flash';
const ctx = ctxFor(clientRequest(requests.toolRoundTrip), MODEL);

t.test('generateContent: text, function calls with their args objects and ids, usage in Gemini\'s terms', async (t) => {
  answer = json(200, codec.encodeResponse(responses.text, ctx));
  const text = await ai.models.generateContent({ model: MODEL, contents: 'Hello there' });
  t.equal(text.text, 'Hi there!');
  t.equal(text.responseId, 'up-1');
  t.equal(text.modelVersion, MODEL);
  t.equal(text.candidates?.[0].finishReason, 'STOP');
  t.match(text.usageMetadata, { promptTokenCount: 12, candidatesTokenCount: 4, totalTokenCount: 16 });

  answer = json(200, codec.encodeResponse(responses.parallelToolCalls, ctx));
  const calls = await ai.models.generateContent({ model: MODEL, contents: 'Weather in Paris and Rome?' });
  t.strictSame(calls.functionCalls, [
    { id: 'call_p1', name: 'get_weather', args: { city: 'Paris' } },
    { id: 'call_p2', name: 'get_weather', args: { city: 'Rome' } },
  ]);

  answer = json(200, codec.encodeResponse(responses.reasoning, ctx));
  const thought = await ai.models.generateContent({ model: MODEL, contents: 'What is 17 * 23?' });
  t.equal(thought.text, '391', 'thoughts are not the answer\'s text');
  t.match(thought.candidates?.[0].content?.parts?.[0], { thought: true, text: '17 * 23 = 391.', thoughtSignature: 'gw1:anthropic-messages:sig-abc' });
  t.match(thought.usageMetadata, { candidatesTokenCount: 10, thoughtsTokenCount: 50, totalTokenCount: 80 });

  answer = json(200, codec.encodeResponse(responses.cached, ctx));
  t.match((await ai.models.generateContent({ model: MODEL, contents: 'x' })).usageMetadata, { promptTokenCount: 1200, cachedContentTokenCount: 1000 });

  answer = json(200, codec.encodeResponse(responses.filtered, ctx));
  const filtered = await ai.models.generateContent({ model: MODEL, contents: 'x' });
  t.equal(filtered.candidates?.[0].finishReason, 'SAFETY');
  t.equal(filtered.text, undefined);
});

/** A stream's chunks through the SDK, and what they add up to. */
async function streamed(events: CanonEvent[]) {
  answer = stream(encodeAll(events, ctx));
  const chunks = [];
  for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents: 'Hello there' })) chunks.push(chunk);
  return {
    chunks,
    // The answer's text parts (chunk.text warns on chunks holding a call).
    text: chunks.flatMap((c) => c.candidates?.[0].content?.parts ?? []).filter((p) => !p.thought && p.text !== undefined).map((p) => p.text).join(''),
    calls: chunks.flatMap((c) => c.functionCalls ?? []),
    last: chunks[chunks.length - 1],
  };
}

t.test('generateContentStream: text, whole function calls, thoughts, the finish and usage on the last chunk', async (t) => {
  const text = await streamed(streams.text.events);
  t.equal(seen?.query, 'alt=sse', 'the SDK asks for SSE');
  t.equal(text.text, 'Hi there!');
  t.equal(text.last.candidates?.[0].finishReason, 'STOP');
  t.match(text.last.usageMetadata, { promptTokenCount: 12, candidatesTokenCount: 4, totalTokenCount: 16 });

  const parallel = await streamed(streams.parallelToolCalls.events);
  t.strictSame(parallel.calls, [
    { id: 'call_p1', name: 'get_weather', args: { city: 'Paris' } },
    { id: 'call_p2', name: 'get_weather', args: { city: 'Rome' } },
  ], 'interleaved fragments arrive as whole calls with parsed args');
  t.equal(parallel.text, 'Let me check.');

  const tool = await streamed(streams.toolCall.events);
  t.strictSame(tool.calls, [{ id: 'call_9', name: 'get_weather', args: { city: 'Paris' } }]);

  const reasoning = await streamed(streams.reasoning.events);
  t.equal(reasoning.text, '391');
  const thoughts = reasoning.chunks.flatMap((c) => c.candidates?.[0].content?.parts ?? []).filter((p) => p.thought);
  t.equal(thoughts.map((p) => p.text).join(''), '17 * 23 = 391.');
  t.equal(thoughts.at(-1)?.thoughtSignature, 'gw1:anthropic-messages:sig-abc');

  const cut = await streamed(streams.cut.events);
  t.equal(cut.last.candidates?.[0].finishReason, 'MAX_TOKENS');
});

t.test('a stream that fails after it began: the SDK throws ApiError with the status', async (t) => {
  answer = stream(encodeAll(failingStream, ctx));
  const got: string[] = [];
  const error = await (async () => {
    try {
      for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents: 'Hello there' })) got.push(chunk.text ?? '');
    } catch (err) {
      return err;
    }
  })();
  t.ok(error instanceof ApiError, 'an ApiError, not a clean end');
  t.equal((error as ApiError).status, 503);
  t.match((error as ApiError).message, /UNAVAILABLE/);
});

t.test('error envelopes: the SDK\'s ApiError carries Google\'s status and the retry delay', async (t) => {
  const limited = codec.encodeError({ status: 429, kind: 'rate_limit', message: 'Slow down', retryAfter: '30' });
  t.strictSame(limited.headers, { 'retry-after': '30' });
  answer = json(limited.status, limited.body, limited.headers);
  const err = await ai.models.generateContent({ model: MODEL, contents: 'x' }).catch((e) => e);
  t.ok(err instanceof ApiError);
  t.equal(err.status, 429);
  const body = JSON.parse(err.message);
  t.match(body.error, { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Slow down', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }] });

  const overloaded = codec.encodeError({ status: 529, kind: 'overloaded', message: 'Overloaded' });
  answer = json(overloaded.status, overloaded.body);
  const err2 = await ai.models.generateContent({ model: MODEL, contents: 'x' }).catch((e) => e);
  t.equal(err2.status, 503, 'Anthropic\'s 529 becomes Google\'s 503 UNAVAILABLE');
});

t.test('countTokens', async (t) => {
  answer = json(200, codec.encodeCount({ inputTokens: 31 }, ctx));
  const counted = await ai.models.countTokens({ model: MODEL, contents: 'Hello there' });
  t.equal(counted.totalTokens, 31);
  t.match(seen?.path, /^\/v1(?:beta)?\/models\/gemini-2\.5-flash:countTokens$/, 'the SDK names its own API version');
  t.strictSame(codec.decodeRequest(seen!.body, 'count_tokens', { model: MODEL, ...seen! }).messages, [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }]);
});

t.test('what the SDK sends (config, tools, history with calls and results) decodes into the canonical request', async (t) => {
  answer = json(200, codec.encodeResponse(responses.text, ctx));
  await ai.models.generateContent({
    model: MODEL,
    contents: [
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { id: 'call_9', name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'call_9', name: 'get_weather', response: { output: '18 C' } } }] },
    ],
    config: {
      systemInstruction: 'Be brief.',
      maxOutputTokens: 200,
      temperature: 0.3,
      stopSequences: ['END'],
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
      tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING, nullable: true } }, required: ['city'] } }] }],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } },
    },
  });
  t.match(seen?.path, /^\/v1(?:beta)?\/models\/gemini-2\.5-flash:generateContent$/);
  const req = codec.decodeRequest(seen!.body, 'generate', { model: MODEL, path: seen!.path, query: seen!.query });
  t.strictSame(req.system, [{ type: 'text', text: 'Be brief.' }]);
  t.strictSame(req.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'call_9', name: 'get_weather', content: [{ type: 'text', text: '18 C' }] }] },
  ]);
  t.strictSame(req.tools, [{ kind: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: ['string', 'null'] } }, required: ['city'] } }],
    'the OpenAPI schema as JSON Schema: lower-case types, nullable as a type list');
  t.strictSame(req.toolChoice, { type: 'tool', name: 'get_weather' });
  t.match(req, { maxOutputTokens: 200, temperature: 0.3, stop: ['END'], reasoning: { enabled: true, budgetTokens: 1024, show: true }, stream: false });
});
