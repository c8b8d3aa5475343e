// The Gemini codec against every canonical fixture: requests encoded into Gemini bodies and decoded back, answers and
// streams encoded for a Gemini client (SSE and JSON array) and decoded from a Gemini upstream.
import t from 'tap';
import type { CanonRequest, CanonResponse } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { failingStream, requests, responses, streams, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { clientRequest, ctxFor, decodeAll, decodeElements, encodeAll, sseChunks, throughGemini, withoutExtras } from './gemini-helpers.ts';

const PATH = '/v1beta/models/model-x';
const SKIP = 'skip_thought_signature_validator';
const WEATHER_PARAMS = {
  type: 'object', required: ['city'],
  properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['C', 'F'] } },
};
const weatherTool = (description = true) => [{ functionDeclarations: [{ name: 'get_weather', ...(description ? { description: 'Current weather for a city' } : {}), parameters: WEATHER_PARAMS }] }];
const user = (...parts: unknown[]) => ({ role: 'user', parts });
const model = (...parts: unknown[]) => ({ role: 'model', parts });

/** The exact body (and path) each fixture request becomes. */
// standIns: the calls that went with the placeholder (these fixtures' calls come from no Gemini, so carry none).
const bodies: Record<string, { path: string; body: Record<string, unknown>; standIns?: number }> = {
  text: {
    path: `${PATH}:generateContent`,
    body: { contents: [user({ text: 'Hello there' })], systemInstruction: { parts: [{ text: 'You are terse.' }] }, generationConfig: { maxOutputTokens: 256, temperature: 0.5 } },
  },
  multiTurn: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [user({ text: 'Hi' }), model({ text: 'Hello! How can I help?' }), user({ text: 'Tell me a joke' })],
      generationConfig: { maxOutputTokens: 100, stopSequences: ['END'] },
    },
  },
  toolRoundTrip: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [
        user({ text: 'Weather in Paris?' }),
        model({ functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SKIP }),
        user({ functionResponse: { id: 'call_1', name: 'get_weather', response: { content: '18 C, sunny' } } }),
      ],
      systemInstruction: { parts: [{ text: 'Use tools when useful.' }] },
      tools: weatherTool(),
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: { maxOutputTokens: 200 },
    },
    standIns: 1,
  },
  parallelToolResults: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [
        user({ text: 'Weather in Paris and Rome?' }),
        model(
          { text: 'Checking both.' },
          { functionCall: { id: 'call_a', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SKIP },
          { functionCall: { id: 'call_b', name: 'get_weather', args: { city: 'Rome' } } },
        ),
        user(
          { functionResponse: { id: 'call_a', name: 'get_weather', response: { content: '18 C' } } },
          { functionResponse: { id: 'call_b', name: 'get_weather', response: { error: 'city not found' } } },
          { text: 'Summarise please.' },
        ),
      ],
      tools: weatherTool(),
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: { maxOutputTokens: 200 },
    },
    standIns: 1,
  },
  forcedTool: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [user({ text: 'Weather in Oslo' })],
      tools: weatherTool(false),
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: { maxOutputTokens: 100 },
    },
  },
  image: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [user({ text: 'What is in this picture?' }, { inlineData: { mimeType: 'image/png', data: (requests.image.messages[0].content[1] as any).source.data } })],
      generationConfig: { maxOutputTokens: 100 },
    },
  },
  structured: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [user({ text: 'Give me a city as JSON' })],
      generationConfig: {
        maxOutputTokens: 100, responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
      },
    },
  },
  reasoning: {
    path: `${PATH}:generateContent`,
    body: { contents: [user({ text: 'What is 17 * 23?' })], generationConfig: { maxOutputTokens: 16000, thinkingConfig: { thinkingBudget: 10240, includeThoughts: true } } },
  },
  midSystem: {
    path: `${PATH}:generateContent`,
    body: {
      contents: [user({ text: 'Hi' }), model({ text: 'Hello.' }), user({ text: '[system] From now on answer in French.' }, { text: 'How are you?' })],
      systemInstruction: { parts: [{ text: 'Be helpful.' }] },
      generationConfig: { maxOutputTokens: 100 },
    },
  },
  streamText: {
    path: `${PATH}:streamGenerateContent?alt=sse`,
    body: { contents: [user({ text: 'Hello there' })], generationConfig: { maxOutputTokens: 100 } },
  },
  countTokens: { path: `${PATH}:countTokens`, body: { contents: [user({ text: 'Hello there' })] } },
};

/**
 * Each fixture as it decodes back from its Gemini body: what Gemini's grammar cannot say is named here, nothing else
 * may differ. Tool results name their function (Gemini's functionResponse does); parallelToolCalls has no Gemini knob;
 * additionalProperties is cleaned out of `parameters`; a schema's name and strictness have no field; an effort is
 * sent as its budget; a mid-conversation system message is user text.
 */
const decodedBack: Record<string, CanonRequest> = {
  ...requests,
  toolRoundTrip: {
    ...requests.toolRoundTrip,
    tools: [{ ...requests.toolRoundTrip.tools[0], kind: 'function', parameters: WEATHER_PARAMS }],
    messages: requests.toolRoundTrip.messages.map((m, i) => (i === 2 ? { role: 'user', content: [{ ...(m.content[0] as any), name: 'get_weather' }] } : m)),
  },
  parallelToolResults: (() => {
    const { parallelToolCalls: _dropped, ...rest } = requests.parallelToolResults;
    return {
      ...rest,
      tools: [{ ...rest.tools[0], parameters: WEATHER_PARAMS }],
      messages: rest.messages.map((m, i) => (i === 2 ? { role: 'user' as const, content: m.content.map((b) => (b.type === 'tool_result' ? { ...b, name: 'get_weather' } : b)) } : m)),
    };
  })(),
  forcedTool: (() => {
    const { parallelToolCalls: _dropped, ...rest } = requests.forcedTool;
    return { ...rest, tools: [{ ...rest.tools[0], parameters: WEATHER_PARAMS }] };
  })(),
  structured: { ...requests.structured, output: { type: 'json_schema', name: 'response', schema: (requests.structured.output as any).schema } },
  reasoning: { ...requests.reasoning, reasoning: { enabled: true, budgetTokens: 10240, show: true } },
  midSystem: {
    ...requests.midSystem,
    messages: [
      ...requests.midSystem.messages.slice(0, 2),
      { role: 'user', content: [{ type: 'text', text: '[system] From now on answer in French.' }, { type: 'text', text: 'How are you?' }] },
    ],
  },
};

t.test('every fixture request: the exact Gemini body and path, and its decode gives the fixture back', async (t) => {
  for (const [name, req] of Object.entries(requests) as [string, CanonRequest][]) {
    if (name === 'imageUrl') continue;
    const out = codec.encodeRequest(req, ctxFor(req));
    t.strictSame(out, bodies[name], `${name}: encoded`);
    const [path, query = ''] = out.path.split('?');
    const decoded = codec.decodeRequest(out.body, req.operation, { model: 'model-x', path, query });
    t.equal(decoded.extras.gemini?.sse, query === 'alt=sse', `${name}: the framing is remembered`);
    t.strictSame(withoutExtras(decoded), decodedBack[name], `${name}: decoded back`);
  }
});

t.test('an image by URL that reached the codec unfetched is refused, naming the block', async (t) => {
  t.throws(() => codec.encodeRequest(requests.imageUrl, ctxFor(requests.imageUrl)), { status: 400, code: 'not_translatable', param: 'messages[0].content[1].source' });
});

t.test('a Gemini client\'s own bodies decode into the fixtures: ids minted for calls without one, results matched by name', async (t) => {
  const ctx = (path = `${PATH}:generateContent`, query = '') => ({ model: 'model-x', path, query });
  t.strictSame(withoutExtras(codec.decodeRequest({
    system_instruction: { parts: [{ text: 'You are terse.' }] },
    contents: [{ parts: [{ text: 'Hello there' }] }],
    generation_config: { max_output_tokens: 256, temperature: 0.5 },
  }, 'generate', ctx())), requests.text, 'snake_case and a content without role (user)');
  const toolBody = {
    systemInstruction: { role: 'user', parts: [{ text: 'Use tools when useful.' }] },
    contents: [
      user({ text: 'Weather in Paris?' }),
      model({ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }),
      user({ functionResponse: { name: 'get_weather', response: { output: '18 C, sunny' } } }),
    ],
    tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather for a city', parametersJsonSchema: WEATHER_SCHEMA }] }],
    toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    generationConfig: { maxOutputTokens: 200 },
  };
  t.strictSame(withoutExtras(codec.decodeRequest(toolBody, 'generate', ctx())), decodedBack.toolRoundTrip.messages && {
    ...requests.toolRoundTrip,
    messages: decodedBack.toolRoundTrip.messages,
  }, 'call_1 minted and given to its result; parametersJsonSchema kept whole; {output} read as the text');
  const stream = codec.decodeRequest({ contents: [user({ text: 'Hello there' })], generationConfig: { maxOutputTokens: 100 } }, 'generate', ctx(`${PATH}:streamGenerateContent`, 'alt=sse'));
  t.strictSame(withoutExtras(stream), requests.streamText);
  t.strictSame(stream.extras, { gemini: { sse: true } });
  const array = codec.decodeRequest({ contents: [user({ text: 'Hello there' })] }, 'generate', ctx(`${PATH}%3AstreamGenerateContent`, ''));
  t.equal(array.stream, true, 'a percent-encoded method still streams');
  t.strictSame(array.extras, { gemini: { sse: false } }, 'no alt=sse: the client reads one JSON array');
  t.equal(codec.streamContentType(array), 'application/json; charset=UTF-8');
  t.equal(codec.streamContentType(stream), 'text/event-stream');
});

t.test('countTokens in both forms', async (t) => {
  const ctx = { model: 'model-x', path: `${PATH}:countTokens`, query: '' };
  t.strictSame(withoutExtras(codec.decodeRequest({ contents: [user({ text: 'Hello there' })] }, 'count_tokens', ctx)), requests.countTokens);
  const whole = codec.decodeRequest({
    generateContentRequest: { model: 'models/model-x', contents: [user({ text: 'Hello there' })], systemInstruction: { parts: [{ text: 'Be brief.' }] }, tools: weatherTool() },
  }, 'count_tokens', ctx);
  t.strictSame(whole.system, [{ type: 'text', text: 'Be brief.' }]);
  t.equal(whole.tools.length, 1);
  t.throws(() => codec.decodeRequest({ contents: [], generateContentRequest: { contents: [] } }, 'count_tokens', ctx), { status: 400, code: 'invalid_body' }, 'not both forms');
  // Encoded with a system prompt or tools, the request goes whole, so they count.
  const out = codec.encodeRequest(whole, ctxFor(whole));
  t.equal(out.path, `${PATH}:countTokens`);
  t.match(out.body, { generateContentRequest: { model: 'models/model-x', systemInstruction: { parts: [{ text: 'Be brief.' }] }, tools: weatherTool() } });
  t.strictSame(codec.encodeCount({ inputTokens: 31 }, ctxFor(whole)), { totalTokens: 31 });
  t.strictSame(codec.encodeCount({ inputTokens: 31, estimated: true }, ctxFor(whole)), { totalTokens: 31, estimated: true });
  t.strictSame(codec.decodeCount({ totalTokens: 31, cachedContentTokenCount: 0 }), { inputTokens: 31 });
});

/** The exact answer each fixture response becomes for a Gemini client. */
const usageOf = (prompt: number, candidates: number, extra: Record<string, number> = {}) =>
  ({ promptTokenCount: prompt, ...extra, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates + (extra.thoughtsTokenCount ?? 0) });
const answer = (id: string, parts: unknown[] | undefined, finishReason: string, usageMetadata: object) => ({
  candidates: [{ ...(parts ? { content: { parts, role: 'model' } } : {}), finishReason, index: 0 }], usageMetadata, modelVersion: 'model-x', responseId: id,
});
const answers: Record<string, unknown> = {
  text: answer('up-1', [{ text: 'Hi there!' }], 'STOP', usageOf(12, 4)),
  cached: answer('up-2', [{ text: 'Cached.' }], 'STOP', { promptTokenCount: 1200, cachedContentTokenCount: 1000, candidatesTokenCount: 3, totalTokenCount: 1203 }),
  toolCall: answer('up-3', [{ functionCall: { id: 'call_9', name: 'get_weather', args: { city: 'Paris' } } }], 'STOP', usageOf(40, 12)),
  parallelToolCalls: answer('up-4', [
    { text: 'Let me check.' },
    { functionCall: { id: 'call_p1', name: 'get_weather', args: { city: 'Paris' } } },
    { functionCall: { id: 'call_p2', name: 'get_weather', args: { city: 'Rome' } } },
  ], 'STOP', usageOf(45, 30)),
  cut: answer('up-5', [{ text: 'The answer is a long' }], 'MAX_TOKENS', usageOf(10, 5)),
  filtered: answer('up-6', undefined, 'SAFETY', usageOf(10, 0)),
  reasoning: answer('up-7', [{ text: '17 * 23 = 391.', thought: true, thoughtSignature: 'gw1:anthropic-messages:sig-abc' }, { text: '391' }], 'STOP',
    { promptTokenCount: 20, candidatesTokenCount: 10, thoughtsTokenCount: 50, totalTokenCount: 80 }),
};

t.test('every fixture answer: the exact GenerateContentResponse, and decoded from Gemini back into the fixture', async (t) => {
  const ctx = ctxFor(requests.toolRoundTrip);
  for (const [name, res] of Object.entries(responses) as [string, CanonResponse][]) {
    const json = codec.encodeResponse(res, ctx);
    t.strictSame(json, answers[name], `${name}: encoded`);
    t.strictSame(codec.decodeResponse(json, ctx), throughGemini(res), `${name}: decoded`);
  }
});

t.test('every fixture stream: Gemini SSE frames with the finish and usage on the last, decoded back into the answer', async (t) => {
  for (const [name, { events, response }] of Object.entries(streams)) {
    const ctx = ctxFor(clientRequest(requests.streamText));
    const text = encodeAll(events, ctx);
    const chunks = sseChunks(text);
    const last = chunks[chunks.length - 1];
    t.ok(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined && c.usageMetadata === undefined), `${name}: only the last chunk finishes`);
    t.strictSame(last.usageMetadata, (codec.encodeResponse(response, ctx) as any).usageMetadata, `${name}: final usage`);
    t.ok(chunks.every((c) => c.modelVersion === 'model-x' && c.responseId === response.id), `${name}: model and id on every chunk`);
    t.strictSame(collectEvents(decodeAll(text, ctx)), throughGemini(response), `${name}: decoded`);
  }
});

t.test('without alt=sse the client gets one JSON array, written element by element', async (t) => {
  for (const [name, { events, response }] of Object.entries(streams)) {
    const ctx = ctxFor(clientRequest(requests.streamText, false));
    const text = encodeAll(events, ctx);
    t.match(text, /^\[\{/, `${name}: opens the array`);
    t.match(text, /\}\r\n\]$/, `${name}: closes it`);
    const elements = JSON.parse(text);
    t.ok(Array.isArray(elements), `${name}: one JSON array`);
    t.strictSame(elements, sseChunks(encodeAll(events, ctxFor(clientRequest(requests.streamText)))), `${name}: the same chunks as SSE`);
    t.strictSame(collectEvents(decodeElements(elements, ctx)), throughGemini(response), `${name}: decoded`);
  }
  const empty = codec.encodeStream(ctxFor(clientRequest(requests.streamText, false)));
  t.equal(empty.end(), '[]', 'a stream with nothing in it is still an array');
});

t.test('a failing stream ends with Google\'s error frame, never a finish', async (t) => {
  const sse = sseChunks(encodeAll(failingStream, ctxFor(clientRequest(requests.streamText))));
  t.strictSame(sse.at(-1), { error: { code: 503, message: 'Overloaded', status: 'UNAVAILABLE' } });
  t.strictSame(sse[0].candidates[0].content.parts, [{ text: 'Partial' }], 'what arrived before it went out');
  t.notOk(sse.some((c) => c.candidates?.[0]?.finishReason), 'no finishReason anywhere');
  const array = JSON.parse(encodeAll(failingStream, ctxFor(clientRequest(requests.streamText, false))));
  t.strictSame(array.at(-1), { error: { code: 503, message: 'Overloaded', status: 'UNAVAILABLE' } }, 'the array\'s last element, and the array still closes');
  const encoder = codec.encodeStream(ctxFor(clientRequest(requests.streamText)));
  failingStream.forEach((e) => encoder.event(e));
  t.equal(encoder.event({ type: 'finish', stop: 'end' }), '', 'nothing after the error');
  // Decoded from an upstream: the error frame becomes the error event and the stream owes no finish.
  const events = decodeAll(encodeAll(failingStream, ctxFor(clientRequest(requests.streamText))), ctxFor(requests.streamText));
  t.match(events.at(-1), { type: 'error', error: { status: 503, kind: 'overloaded', message: 'Overloaded', code: 'UNAVAILABLE' } });
  t.notOk(events.some((e) => e.type === 'finish'));
});
