// The Gemini codec as the upstream side, hard cases of translation.md §3 and the bugs of §4 that touch Gemini: tool
// results and ids, names, signatures, thinking budgets, empty parts, stop reasons across chunks, blocked prompts,
// usage, errors, refusals, and stream state kept per request.
import t from 'tap';
import type { CanonEvent, CanonMessage, CanonRequest } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { fitName, GEMINI_NAMES } from '../../adapters/shared/tool-names.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { ctxFor, decodeElements } from './gemini-helpers.ts';

const ask = (text: string): CanonMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const weather = requests.toolRoundTrip.tools[0];
const bodyOf = (req: CanonRequest) => codec.encodeRequest(req, ctxFor(req)).body as Record<string, any>;
const chunk = (parts: unknown[], finishReason?: string, usageMetadata?: object) => ({
  candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
  ...(usageMetadata ? { usageMetadata } : {}), modelVersion: 'gemini-2.5-flash', responseId: 'r1',
});
const decoded = (elements: unknown[], req: CanonRequest = requests.toolRoundTrip) => collectEvents(decodeElements(elements, ctxFor(req)));

t.test('tool results: one user content in the order of the previous turn\'s calls, names from the history (§3)', async (t) => {
  const req: CanonRequest = {
    ...requests.parallelToolResults,
    messages: [
      requests.parallelToolResults.messages[0],
      requests.parallelToolResults.messages[1],
      {
        role: 'user', content: [
          { type: 'text', text: 'Here you go.' },
          { type: 'tool_result', callId: 'call_b', content: [{ type: 'text', text: 'Rome: 20 C' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] },
          { type: 'tool_result', callId: 'call_a', content: [{ type: 'text', text: 'Paris: 18 C' }] },
        ],
      },
    ],
  };
  t.strictSame(bodyOf(req).contents[2], {
    role: 'user', parts: [
      { functionResponse: { id: 'call_a', name: 'get_weather', response: { content: 'Paris: 18 C' } } },
      { functionResponse: { id: 'call_b', name: 'get_weather', response: { content: 'Rome: 20 C' } } },
      { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
      { text: 'Here you go.' },
    ],
  }, 'results in call order, the image after them, then the text');
  const orphan: CanonRequest = { ...requests.text, messages: [{ role: 'user', content: [{ type: 'tool_result', callId: 'nowhere', content: [] }] }] };
  t.throws(() => bodyOf(orphan), { status: 400, code: 'invalid_body', param: 'messages[0].content[0].callId' }, 'a result whose function cannot be named is refused');
  const named: CanonRequest = { ...orphan, messages: [{ role: 'user', content: [{ type: 'tool_result', callId: 'x', name: 'get_weather', content: [] }] }] };
  t.strictSame(bodyOf(named).contents[0].parts[0].functionResponse, { id: 'x', name: 'get_weather', response: { content: '' } }, 'or named by the result itself');
});

t.test('empty text parts are never sent, and same-role turns merge (§3)', async (t) => {
  const req: CanonRequest = {
    ...requests.text,
    messages: [ask('Hi'), { role: 'assistant', content: [{ type: 'text', text: '' }] }, ask(''), ask('Again')],
  };
  t.strictSame(bodyOf(req).contents, [{ role: 'user', parts: [{ text: 'Hi' }, { text: 'Again' }] }]);
  t.strictSame(bodyOf({ ...requests.text, system: [{ type: 'text', text: '' }] }).systemInstruction, undefined, 'no empty system instruction');
});

t.test('system messages: leading ones join systemInstruction, later ones are user text in place (§3 System prompts)', async (t) => {
  const sys = (text: string): CanonMessage => ({ role: 'system', content: [{ type: 'text', text, cache: {} }] });
  const body = bodyOf({ ...requests.text, system: [{ type: 'text', text: 'A' }], messages: [sys('B'), sys(''), ask('Hi'), sys('C'), { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] }, sys('D')] });
  t.strictSame(body.systemInstruction, { parts: [{ text: 'A' }, { text: 'B' }] });
  t.strictSame(body.contents, [
    { role: 'user', parts: [{ text: 'Hi' }, { text: '[system] C' }] },
    { role: 'model', parts: [{ text: 'Hello.' }] },
    { role: 'user', parts: [{ text: '[system] D' }] },
  ]);
  const only = bodyOf({ ...requests.text, messages: [sys('Only instructions.')] });
  t.strictSame(only.contents, [{ role: 'user', parts: [{ text: '[system] Only instructions.' }] }], 'nothing after them: kept as contents, which Gemini requires');
});

t.test('long or foreign tool names are fitted everywhere and restored in the answer (§3)', async (t) => {
  const long = `mcp__server__${'x'.repeat(70)}`;
  const slashed = 'files/read';
  const req: CanonRequest = {
    ...requests.text,
    tools: [{ ...weather, name: long }, { ...weather, name: slashed }],
    toolChoice: { type: 'tool', name: long },
    messages: [
      ask('go'),
      { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: slashed, arguments: '{}' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'c1', content: [{ type: 'text', text: 'ok' }] }] },
    ],
  };
  const body = bodyOf(req);
  const fitted = fitName(long, GEMINI_NAMES);
  const cleaned = fitName(slashed, GEMINI_NAMES);
  t.ok(fitted.length <= 64 && fitted !== long);
  t.match(cleaned, /^files_read_[0-9a-f]{8}$/, 'a cleaned name carries a hash of the original (no collisions)');
  t.strictSame(body.tools[0].functionDeclarations.map((d: any) => d.name), [fitted, cleaned]);
  t.strictSame(body.toolConfig.functionCallingConfig.allowedFunctionNames, [fitted]);
  t.equal(body.contents[1].parts[0].functionCall.name, cleaned);
  t.equal(body.contents[2].parts[0].functionResponse.name, cleaned);
  const res = decoded([chunk([{ functionCall: { name: fitted, args: {} } }, { functionCall: { name: cleaned, args: { p: 1 } } }], 'STOP')], req);
  t.strictSame(res.content.map((b) => b.type === 'tool_call' && b.name), [long, slashed]);
});

t.test('a freeform tool is a function taking `input`; its call comes back raw', async (t) => {
  const req: CanonRequest = { ...requests.text, tools: [{ kind: 'custom', name: 'apply_patch', description: 'Patch files' }] };
  t.strictSame(bodyOf(req).tools[0].functionDeclarations[0], {
    name: 'apply_patch', description: 'Patch files', parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
  });
  const res = decoded([chunk([{ functionCall: { name: 'apply_patch', args: { input: '*** Begin Patch' } } }], 'STOP')], req);
  t.match(res.content[0], { type: 'tool_call', name: 'apply_patch', arguments: '*** Begin Patch', custom: true });
  const replay: CanonRequest = { ...req, messages: [ask('go'), { role: 'assistant', content: [res.content[0]] }] };
  t.strictSame(bodyOf(replay).contents[1].parts[0].functionCall.args, { input: '*** Begin Patch' });
  const noParams: CanonRequest = { ...requests.text, tools: [{ kind: 'function', name: 'now', parameters: { type: 'object', properties: {} } }] };
  t.strictSame(bodyOf(noParams).tools[0].functionDeclarations[0], { name: 'now' }, 'a function without parameters declares none');
});

t.test('ids: minted for calls without one, distinct for parallel calls to one function, unique across turns (§4.10)', async (t) => {
  const history: CanonRequest = {
    ...requests.toolRoundTrip,
    messages: [...requests.toolRoundTrip.messages, { role: 'assistant', content: [{ type: 'text', text: 'Sunny.' }] }, ask('And Rome and Oslo?')],
  };
  const res = decoded([
    chunk([{ functionCall: { name: 'get_weather', args: { city: 'Rome' } } }]),
    chunk([{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }, { functionCall: { id: 'own', name: 'get_weather', args: {} } }]),
    chunk([], 'STOP', { promptTokenCount: 5, candidatesTokenCount: 3, totalTokenCount: 8 }),
  ], history);
  t.strictSame(res.content.map((b) => b.type === 'tool_call' && b.id), ['call_2', 'call_3', 'own'], 'call_1 is in the history; an upstream id is kept');
  t.equal(res.stop, 'tool_use', 'STOP in a later chunk than the calls is still tool_use');
});

t.test('thought signatures: Gemini\'s own replayed, any other dropped, the placeholder on the first call (§4.3, §4.4)', async (t) => {
  const own = { format: 'gemini', value: 'c2lnLWdlbWluaQ==' };
  const req: CanonRequest = {
    ...requests.text,
    messages: [
      ask('go'),
      {
        role: 'assistant', content: [
          { type: 'reasoning', text: 'thinking', signature: { format: 'anthropic-messages', value: 'sig' } },
          { type: 'reasoning', text: 'gemini thought', signature: own },
          { type: 'reasoning', text: '', signature: own },
          { type: 'text', text: 'answer' },
          { type: 'tool_call', id: 'a', name: 'get_weather', arguments: '{}', signature: { format: 'openai-responses', value: 'enc' } },
          { type: 'tool_call', id: 'b', name: 'get_weather', arguments: 'not json' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'get_weather', arguments: '{"city":"Oslo"}', signature: own }] },
    ],
  };
  t.strictSame(bodyOf(req).contents[1].parts, [
    { text: 'gemini thought', thought: true, thoughtSignature: own.value },
    { text: 'answer', thoughtSignature: own.value },
    { functionCall: { id: 'a', name: 'get_weather', args: {} }, thoughtSignature: 'skip_thought_signature_validator' },
    { functionCall: { id: 'b', name: 'get_weather', args: {} } },
    { functionCall: { id: 'c', name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: own.value },
  ], 'another provider\'s reasoning dropped; a bare signature rides on the next part; turns merged; a call with its own signature keeps it');
});

t.test('reasoning → thinkingConfig: the effort\'s budget, fitted to the model family', async (t) => {
  const thinking = (reasoning: CanonRequest['reasoning'], model = 'gemini-2.5-flash') => bodyOf({ ...requests.text, model, reasoning }).generationConfig.thinkingConfig;
  t.strictSame(thinking({ effort: 'medium' }), { thinkingBudget: 4096 });
  t.strictSame(thinking({ effort: 'minimal', show: true }), { thinkingBudget: 1024, includeThoughts: true });
  t.strictSame(thinking({ effort: 'max' }), { thinkingBudget: 24576 }, 'Flash takes at most 24576');
  t.strictSame(thinking({ effort: 'max' }, 'gemini-2.5-pro'), { thinkingBudget: 32768 });
  t.strictSame(thinking({ budgetTokens: 31999, show: true }), { thinkingBudget: 24576, includeThoughts: true }, 'Claude Code\'s budget fitted');
  t.strictSame(thinking({ enabled: false, show: true }), { thinkingBudget: 0 }, 'off, and nothing to show');
  t.strictSame(thinking({ enabled: false }, 'gemini-2.5-pro'), { thinkingBudget: 128 }, 'Pro cannot turn thinking off: its least');
  t.strictSame(thinking({ budgetTokens: 100 }, 'gemini-2.5-flash-lite'), { thinkingBudget: 512 });
  t.strictSame(thinking({ enabled: true, budgetTokens: -1 }), { thinkingBudget: -1 }, 'dynamic stays dynamic');
  t.equal(bodyOf({ ...requests.text, reasoning: { show: false } }).generationConfig.thinkingConfig, undefined);
});

t.test('generation parameters: clamped, refused or dropped as docs/translation.md says', async (t) => {
  const g = (over: Partial<CanonRequest>) => bodyOf({ ...requests.text, ...over }).generationConfig;
  t.match(g({ temperature: 3, topP: 0.9, topK: 40, seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2 }), { temperature: 2, topP: 0.9, topK: 40, seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2 });
  t.match(g({ n: 2, logprobs: true, topLogprobs: 3 }), { candidateCount: 2, responseLogprobs: true, logprobs: 3 });
  t.notOk('candidateCount' in g({ n: 1 }), 'n = 1 is the default');
  t.strictSame(g({ output: { type: 'json_object' } }).responseMimeType, 'application/json');
  t.throws(() => g({ stop: ['a', 'b', 'c', 'd', 'e', 'f'] }), { status: 400, code: 'not_translatable', param: 'stop' });
  const body = bodyOf({ ...requests.forcedTool, user: 'u-1', parallelToolCalls: false });
  t.strictSame(Object.keys(body).sort(), ['contents', 'generationConfig', 'toolConfig', 'tools'], 'no user, no parallel knob: nothing Gemini does not know (§4.9)');
  t.throws(() => bodyOf({ ...requests.image, messages: [{ role: 'user', content: [{ type: 'file', source: { kind: 'file', format: 'openai-chat', id: 'file-1' } }] }] }), { status: 400, code: 'not_translatable' }, 'another provider\'s file');
  t.strictSame(bodyOf({ ...requests.image, messages: [{ role: 'user', content: [{ type: 'file', source: { kind: 'file', format: 'gemini', id: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mediaType: 'application/pdf' } }] }] }).contents[0].parts,
    [{ fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mimeType: 'application/pdf' } }], 'Gemini\'s own file');
  t.strictSame(bodyOf({ ...requests.text, extras: { gemini: { sse: true, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] } } }).safetySettings,
    [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }], 'a Gemini client\'s safety settings pass');
  t.equal(codec.encodeRequest({ ...requests.text, model: 'models/gemini-2.5-flash' }, ctxFor(requests.text)).path, '/v1beta/models/gemini-2.5-flash:generateContent');
});

t.test('stop reasons: the finishReason table, blocked prompts, only the first candidate', async (t) => {
  const stop = (finishReason: string, parts: unknown[] = [{ text: 'x' }]) => decoded([chunk(parts, finishReason)]).stop;
  t.equal(stop('STOP'), 'end');
  t.equal(stop('MAX_TOKENS'), 'max_tokens');
  for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']) t.equal(stop(reason), 'content_filter', reason);
  t.equal(stop('MALFORMED_FUNCTION_CALL', []), 'end', 'a malformed call ends the answer without calls');
  t.equal(stop('SOMETHING_NEW'), 'end');
  const blocked = codec.decodeResponse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 }, modelVersion: 'gemini-2.5-flash', responseId: 'r' }, ctxFor(requests.text));
  t.match(blocked, { stop: 'content_filter', content: [], usage: { input: 7, output: 0 } });
  const two = codec.decodeResponse({
    candidates: [{ content: { parts: [{ text: 'second' }] }, index: 1, finishReason: 'STOP' }, { content: { parts: [{ text: 'first' }] }, index: 0, finishReason: 'STOP' }],
  }, ctxFor(requests.text));
  t.strictSame(two.content, [{ type: 'text', text: 'first' }]);
  const noFinish = codec.decodeResponse({ candidates: [{ content: { parts: [{ text: 'x' }] } }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } }, ctxFor(requests.text));
  t.match(noFinish, { stop: 'end', usage: { input: 3, output: 1 } }, 'a whole answer without finishReason still ended');
  const cut = decodeElements([chunk([{ text: 'partial' }])], ctxFor(requests.text));
  t.notOk(cut.some((e) => e.type === 'finish'), 'a stream that closed before its finishReason owes no finish: the bridge reports it cut');
});

t.test('usage: the upstream\'s own numbers, cached and thoughts included (§4.5)', async (t) => {
  const res = decoded([chunk([{ text: 'x' }], 'STOP', { promptTokenCount: 1200, cachedContentTokenCount: 1000, candidatesTokenCount: 40, thoughtsTokenCount: 60, toolUsePromptTokenCount: 5, totalTokenCount: 1305 })]);
  t.strictSame(res.usage, { input: 1205, cacheRead: 1000, cacheWrite: 0, output: 100, reasoning: 60 });
  const streamed = decodeElements([chunk([{ text: 'a' }], undefined, { promptTokenCount: 9, totalTokenCount: 9 }), chunk([{ text: 'b' }], 'STOP', { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 })], ctxFor(requests.text));
  t.match(streamed[0], { type: 'start', usage: { input: 9, cacheRead: 0 } }, 'the prompt count known from the first chunk');
  t.match(streamed.at(-1), { type: 'finish', usage: { input: 9, output: 2 } }, 'the last usageMetadata is the final one');
});

t.test('stream decoding: thoughts, signatures and text as blocks; calls whole; image parts whole', async (t) => {
  const events = decodeElements([
    chunk([{ text: 'Let me ', thought: true }]),
    chunk([{ text: 'think.', thought: true }]),
    chunk([{ text: 'The answer', thoughtSignature: 'U0lH' }]),
    chunk([{ text: ' is 4.' }, { text: '', thoughtSignature: 'U0lHMg==' }]),
    chunk([{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'Q0FMTA==' }], 'STOP'),
  ], ctxFor(requests.toolRoundTrip));
  const res = collectEvents(events);
  t.strictSame(res.content, [
    { type: 'reasoning', text: 'Let me think.' },
    { type: 'text', text: 'The answer is 4.', signature: { format: 'gemini', value: 'U0lHMg==' } },
    { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
    { type: 'tool_call', id: 'call_2', name: 'get_weather', arguments: '{"city":"Paris"}', signature: { format: 'gemini', value: 'Q0FMTA==' } },
  ]);
  const callStart = events.findIndex((e) => e.type === 'block_start' && e.block.type === 'tool_call');
  t.strictSame(events.slice(callStart + 1, callStart + 3).map((e) => e.type), ['delta', 'block_end'], 'the call starts, gets its arguments and ends at once');
});

t.test('errors both ways: Google\'s status names, the retry delay, a refused key (§4 errors)', async (t) => {
  const limited = codec.decodeError(429, JSON.stringify({ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }] } }));
  t.strictSame(limited, { status: 429, kind: 'rate_limit', message: 'Quota exceeded', code: 'RESOURCE_EXHAUSTED', retryAfter: '30' });
  const key = codec.decodeError(400, JSON.stringify({ error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }] } }));
  t.match(key, { status: 401, kind: 'authentication', code: 'API_KEY_INVALID' }, 'an invalid key is the credential failing, not the request');
  t.match(codec.decodeError(503, '{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}'), { kind: 'overloaded', message: 'The model is overloaded.' });
  t.match(codec.decodeError(502, '<html>Bad gateway</html>'), { status: 502, kind: 'server', message: '<html>Bad gateway</html>' });
  t.match(codec.decodeError(504, ''), { kind: 'timeout', message: 'The upstream failed (HTTP 504)' });
  const wire = (kind: any, status: number) => codec.encodeError({ status, kind, message: 'm' });
  const table: Array<[string, number, number, string]> = [
    ['invalid_request', 400, 400, 'INVALID_ARGUMENT'], ['invalid_request', 422, 422, 'INVALID_ARGUMENT'], ['authentication', 401, 401, 'UNAUTHENTICATED'],
    ['billing', 402, 429, 'RESOURCE_EXHAUSTED'], ['permission', 403, 403, 'PERMISSION_DENIED'], ['not_found', 404, 404, 'NOT_FOUND'],
    ['request_too_large', 413, 413, 'INVALID_ARGUMENT'], ['rate_limit', 429, 429, 'RESOURCE_EXHAUSTED'], ['server', 502, 502, 'INTERNAL'],
    ['overloaded', 529, 503, 'UNAVAILABLE'], ['timeout', 504, 504, 'DEADLINE_EXCEEDED'],
  ];
  for (const [kind, from, status, name] of table) {
    t.strictSame(wire(kind, from), { status, body: { error: { code: status, message: 'm', status: name } } }, `${kind} ${from}`);
  }
  t.strictSame(codec.encodeError({ status: 400, kind: 'invalid_request', message: 'm', code: 'not_translatable' }).body, {
    error: { code: 400, message: 'm', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'not_translatable', domain: 'gateway' }] },
  });
});

t.test('stream state is per request: two interleaved decoders do not mix (§4.11)', async (t) => {
  const a = codec.decodeStream(ctxFor(requests.toolRoundTrip));
  const b = codec.decodeStream(ctxFor(requests.toolRoundTrip));
  const feed = (d: typeof a, value: unknown) => d.frame({ data: JSON.stringify(value), raw: '' });
  const events: CanonEvent[][] = [[], []];
  events[0].push(...feed(a, chunk([{ text: 'A1' }])));
  events[1].push(...feed(b, chunk([{ functionCall: { name: 'get_weather', args: {} } }])));
  events[0].push(...feed(a, chunk([{ text: 'A2' }], 'STOP')));
  events[1].push(...feed(b, chunk([], 'STOP')));
  events[0].push(...a.end());
  events[1].push(...b.end());
  t.match(collectEvents(events[0]), { content: [{ type: 'text', text: 'A1A2' }], stop: 'end' });
  t.match(collectEvents(events[1]), { content: [{ type: 'tool_call', id: 'call_2' }], stop: 'tool_use' });
});

t.test('schemas without a type become object schemas for other targets (§4.8)', async (t) => {
  const req = codec.decodeRequest({
    contents: [{ role: 'user', parts: [{ text: 'x' }] }],
    tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b', parameters: { properties: { q: { type: 'STRING' } } } }, { name: 'c', parametersJsonSchema: WEATHER_SCHEMA }] }],
  }, 'generate', { model: 'm', path: '/v1beta/models/m:generateContent', query: '' });
  t.strictSame(req.tools.map((tool) => tool.kind === 'function' && tool.parameters), [
    { type: 'object', properties: {} },
    { type: 'object', properties: { q: { type: 'string' } } },
    WEATHER_SCHEMA,
  ]);
});
