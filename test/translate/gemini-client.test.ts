// The Gemini codec as the client side: everything a Gemini body may say (camelCase and snake_case, every part kind,
// tool configs, generation config, thinking), what it refuses when translating, signatures coming home, and the stream
// encoder's hard cases (late signatures, whole blocks, a stream without its finish, per-request state).
import t from 'tap';
import type { CanonEvent } from '../../core/canonical.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { requests } from './canonical-fixtures.ts';
import { clientRequest, ctxFor, encodeAll, sseChunks } from './gemini-helpers.ts';

const GEN = '/v1beta/models/gemini-2.5-flash:generateContent';
const decode = (body: Record<string, unknown>) => codec.decodeRequest(body, 'generate', { model: 'gemini-2.5-flash', path: GEN, query: '' });
const ask = { role: 'user', parts: [{ text: 'Hi' }] };
const fn = (name: string) => ({ name, parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } } } });

t.test('snake_case field names read like camelCase ones', async (t) => {
  const req = decode({
    system_instruction: { parts: [{ text: 'Be brief.' }] },
    contents: [
      { role: 'user', parts: [{ text: 'Look' }, { inline_data: { mime_type: 'image/png', data: 'AAAA' } }] },
      { role: 'model', parts: [{ function_call: { name: 'lookup', args: { q: 'x' } }, thought_signature: 'gw1:anthropic-messages:sig' }] },
      { role: 'user', parts: [{ function_response: { name: 'lookup', response: { content: 'found' } } }] },
    ],
    tools: [{ function_declarations: [{ name: 'lookup', parameters_json_schema: { type: 'object', properties: { q: { type: 'string' } } } }] }],
    tool_config: { function_calling_config: { mode: 'ANY', allowed_function_names: ['lookup'] } },
    generation_config: { max_output_tokens: 50, stop_sequences: ['X'], top_k: 3, thinking_config: { thinking_budget: 0 }, response_mime_type: 'application/json' },
    safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
  });
  t.strictSame(req.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"q":"x"}', signature: { format: 'anthropic-messages', value: 'sig' } }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'call_1', name: 'lookup', content: [{ type: 'text', text: 'found' }] }] },
  ], 'a wrapped signature comes home to the format that made it');
  t.match(req, {
    system: [{ type: 'text', text: 'Be brief.' }], toolChoice: { type: 'tool', name: 'lookup' }, maxOutputTokens: 50, stop: ['X'], topK: 3,
    reasoning: { enabled: false }, output: { type: 'json_object' },
    extras: { gemini: { sse: false, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] } },
  });
});

t.test('parts: files, thoughts, signatures, results matched to calls by name when they carry no id', async (t) => {
  const req = decode({
    contents: [
      { role: 'user', parts: [{ fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/f1', mimeType: 'application/pdf' } }, { inlineData: { mimeType: 'application/pdf', data: 'JVBE', displayName: 'a.pdf' } }] },
      {
        role: 'model', parts: [
          { text: 'Thinking', thought: true },
          { text: '', thought: true, thoughtSignature: 'gw1:anthropic-messages:s1' },
          { text: 'Two lookups.' },
          { functionCall: { name: 'a', args: {} }, thoughtSignature: 'skip_thought_signature_validator' },
          { functionCall: { name: 'b', args: {} } },
        ],
      },
      {
        role: 'user', parts: [
          { functionResponse: { name: 'b', response: { temp: 21 } } },
          { functionResponse: { name: 'a', response: { error: { code: 1 } }, parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } },
          { text: '' },
        ],
      },
    ],
  });
  t.strictSame(req.messages[0].content, [
    { type: 'file', source: { kind: 'file', format: 'gemini', id: 'https://generativelanguage.googleapis.com/v1beta/files/f1', mediaType: 'application/pdf' } },
    { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' }, filename: 'a.pdf' },
  ]);
  t.strictSame(req.messages[1].content, [
    { type: 'reasoning', text: 'Thinking', signature: { format: 'anthropic-messages', value: 's1' } },
    { type: 'text', text: 'Two lookups.' },
    { type: 'tool_call', id: 'call_1', name: 'a', arguments: '{}' },
    { type: 'tool_call', id: 'call_2', name: 'b', arguments: '{}' },
  ], 'a signature-only part signs the thought before it; the placeholder is no signature');
  t.strictSame(req.messages[2].content, [
    { type: 'tool_result', callId: 'call_2', name: 'b', content: [{ type: 'text', text: '{"temp":21}' }] },
    { type: 'tool_result', callId: 'call_1', name: 'a', content: [{ type: 'text', text: '{"code":1}' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }], isError: true },
  ], 'each result finds its call by name; an object response is its JSON; empty text dropped');
  const empty = decode({ contents: [ask, { role: 'model', parts: [{ text: '' }] }, { role: 'user', parts: [{ text: 'Again' }] }] });
  t.strictSame(empty.messages.map((m) => m.role), ['user', 'user'], 'a turn of empty text only is no message');
});

t.test('a thought kept in streamed pieces, across consecutive model contents, is one block with its signature', async (t) => {
  // As Gemini CLI keeps an answer it streamed: a content per chunk, the signature (Anthropic's, wrapped) on the last piece.
  const req = decode({
    contents: [
      { role: 'user', parts: [{ text: 'Why?' }] },
      { role: 'model', parts: [{ text: 'Let me ', thought: true }] },
      { role: 'model', parts: [{ text: 'think.', thought: true }, { text: ' More.', thought: true, thoughtSignature: 'gw1:anthropic-messages:sig' }] },
      { role: 'model', parts: [{ text: 'Because.' }, { functionCall: { name: 'f', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'ok' } } }] },
      { role: 'model', parts: [{ text: 'Second', thought: true, thoughtSignature: 'gw1:anthropic-messages:s2' }, { text: 'thought', thought: true }] },
    ],
  });
  t.strictSame(req.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant'], 'consecutive model contents are one turn');
  t.strictSame(req.messages[1].content, [
    { type: 'reasoning', text: 'Let me think. More.', signature: { format: 'anthropic-messages', value: 'sig' } },
    { type: 'text', text: 'Because.' },
    { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
  ], 'the pieces joined, signed as a whole');
  t.strictSame(req.messages[2].content, [{ type: 'tool_result', callId: 'call_1', name: 'f', content: [{ type: 'text', text: 'ok' }] }], 'the call of an earlier piece is still answered');
  t.strictSame(req.messages[3].content, [
    { type: 'reasoning', text: 'Second', signature: { format: 'anthropic-messages', value: 's2' } },
    { type: 'reasoning', text: 'thought' },
  ], 'a thought after a signed one is another thought');
});

t.test('tool configs, thinking levels, output schemas, sampling', async (t) => {
  const tools = [{ functionDeclarations: [fn('a'), fn('b'), fn('c')] }];
  const any = decode({ contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'c'] } } });
  t.strictSame(any.toolChoice, { type: 'required' });
  t.strictSame(any.tools.map((x) => x.name), ['a', 'c'], 'ANY over several names: required, over those tools only');
  t.strictSame(decode({ contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: 'VALIDATED' } } }).toolChoice, { type: 'auto' });
  t.strictSame(decode({ contents: [ask], tools, toolConfig: { functionCallingConfig: { mode: 'NONE' } } }).toolChoice, { type: 'none' });
  t.equal(decode({ contents: [ask], tools }).toolChoice, undefined);
  t.strictSame(decode({ contents: [ask], generationConfig: { thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } } }).reasoning, { enabled: true, effort: 'high', show: true });
  t.strictSame(decode({ contents: [ask], generationConfig: { thinkingConfig: { thinkingBudget: -1 } } }).reasoning, { enabled: true, budgetTokens: -1 });
  t.strictSame(decode({ contents: [ask], generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { n: { type: 'INTEGER', nullable: true } }, propertyOrdering: ['n'] } } }).output,
    { type: 'json_schema', name: 'response', schema: { type: 'object', properties: { n: { type: ['integer', 'null'] } } } });
  t.match(decode({ contents: [ask], generationConfig: { candidateCount: 2, responseLogprobs: true, logprobs: 5, seed: '42', presencePenalty: 0.5, frequencyPenalty: -0.5, topP: 0.9 } }),
    { n: 2, logprobs: true, topLogprobs: 5, seed: 42, presencePenalty: 0.5, frequencyPenalty: -0.5, topP: 0.9 });
});

t.test('what cannot be translated is refused with a 400 naming the field', async (t) => {
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['Google Search', { contents: [ask], tools: [{ googleSearch: {} }] }, 'tools[0].googleSearch'],
    ['code execution', { contents: [ask], tools: [{ functionDeclarations: [fn('a')] }, { code_execution: {} }] }, 'tools[1].codeExecution'],
    ['executableCode parts', { contents: [ask, { role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }] }] }, 'contents[1].parts[0].executableCode'],
    ['a cached content', { contents: [ask], cachedContent: 'cachedContents/abc' }, 'cachedContent'],
    ['image output', { contents: [ask], generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }, 'generationConfig.responseModalities'],
    ['enum output', { contents: [ask], generationConfig: { responseMimeType: 'text/x.enum' } }, 'generationConfig.responseMimeType'],
    ['a schema without JSON', { contents: [ask], generationConfig: { responseJsonSchema: { type: 'object' } } }, 'generationConfig.responseMimeType'],
    ['a role Gemini does not have', { contents: [{ role: 'system', parts: [{ text: 'x' }] }] }, 'contents[0].role'],
    ['a part with two data fields', { contents: [{ role: 'user', parts: [{ text: 'x', inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }] }, 'contents[0].parts[0]'],
    ['a part with none', { contents: [{ role: 'user', parts: [{ thought: true }] }] }, 'contents[0].parts[0]'],
    ['a content without parts', { contents: [{ role: 'user', parts: [] }] }, 'contents[0].parts'],
    ['no contents', { contents: [] }, 'contents'],
    ['a call in a user turn', { contents: [{ role: 'user', parts: [{ functionCall: { name: 'a' } }] }] }, 'contents[0].parts[0].functionCall'],
    ['a response in a model turn', { contents: [{ role: 'model', parts: [{ functionResponse: { name: 'a', response: {} } }] }] }, 'contents[0].parts[0].functionResponse'],
    ['a response that is not an object', { contents: [ask, { role: 'user', parts: [{ functionResponse: { name: 'a', response: '21' } }] }] }, 'contents[1].parts[0].functionResponse.response'],
    ['a wrong type', { contents: [ask], generationConfig: { maxOutputTokens: 'many' } }, 'generationConfig.maxOutputTokens'],
    ['an unknown mode', { contents: [ask], toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, 'toolConfig.functionCallingConfig.mode'],
    ['an unknown level', { contents: [ask], generationConfig: { thinkingConfig: { thinkingLevel: 'extreme' } } }, 'generationConfig.thinkingConfig.thinkingLevel'],
    ['a declaration without a name', { contents: [ask], tools: [{ functionDeclarations: [{ description: 'x' }] }] }, 'tools[0].functionDeclarations[0].name'],
    ['media without data', { contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png' } }] }] }, 'contents[0].parts[0].inlineData'],
  ];
  for (const [what, body, param] of refused) t.throws(() => decode(body), { status: 400, code: /^(invalid_body|not_translatable)$/, param }, what);
  const err = (() => { try { decode({ contents: [ask], tools: [{ googleSearch: {} }] }); } catch (e) { return e as any; } })();
  t.strictSame(codec.encodeError({ status: err.status, kind: 'invalid_request', message: err.message, code: err.code }).body, {
    error: { code: 400, message: err.message, status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'not_translatable', domain: 'gateway' }] },
  }, 'in Google\'s envelope');
});

const ctx = ctxFor(clientRequest(requests.streamText), 'gemini-2.5-flash');
const usage = { input: 5, cacheRead: 0, cacheWrite: 0, output: 7, reasoning: 3 };

t.test('stream encoder: a late signature rides on its part, whole blocks go out, parts never empty', async (t) => {
  const events: CanonEvent[] = [
    { type: 'start', id: 'r', model: 'claude-x', usage: { input: 5 } },
    { type: 'block_start', index: 0, block: { type: 'reasoning' } },
    { type: 'delta', index: 0, text: 'hmm' },
    { type: 'block_end', index: 0 },
    { type: 'block_start', index: 1, block: { type: 'text' } },
    { type: 'delta', index: 1, text: '' },
    { type: 'delta', index: 1, text: 'Hi' },
    { type: 'delta', index: 0, signature: { format: 'anthropic-messages', value: 'late' } },
    { type: 'block_end', index: 1 },
    { type: 'block_start', index: 2, block: { type: 'whole', block: { type: 'reasoning', text: '', redacted: { format: 'anthropic-messages', value: 'r' } } } },
    { type: 'block_start', index: 3, block: { type: 'whole', block: { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } } } },
    { type: 'block_end', index: 3 },
    { type: 'block_start', index: 4, block: { type: 'tool_call', id: 'c', name: 'f', signature: { format: 'gemini', value: 'R0VN' } } },
    { type: 'delta', index: 4, arguments: 'not json' },
    { type: 'block_end', index: 4 },
    { type: 'usage', usage: { output: 7, reasoning: 3 } },
    { type: 'finish', stop: 'tool_use' },
  ];
  const chunks = sseChunks(encodeAll(events, ctx));
  t.strictSame(chunks.map((c) => c.candidates[0].content?.parts), [
    [{ text: 'hmm', thought: true }],
    [{ text: 'Hi' }],
    [{ text: '', thought: true, thoughtSignature: 'gw1:anthropic-messages:late' }],
    [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }],
    [{ functionCall: { id: 'c', name: 'f', args: {} }, thoughtSignature: 'R0VN' }],
  ], 'a signature after its part left goes in a part of its own; redacted reasoning stays behind; unparseable arguments are {}');
  t.strictSame(chunks.at(-1).usageMetadata, { promptTokenCount: 5, candidatesTokenCount: 4, thoughtsTokenCount: 3, totalTokenCount: 12 }, 'usage events add up when finish has none');
  t.equal(chunks.at(-1).candidates[0].finishReason, 'STOP');
  const held = sseChunks(encodeAll([
    { type: 'block_start', index: 0, block: { type: 'reasoning' } },
    { type: 'delta', index: 0, text: 'a' },
    { type: 'delta', index: 0, signature: { format: 'gemini', value: 'U0lH' } },
    { type: 'block_end', index: 0 },
    { type: 'finish', stop: 'end', usage },
  ], ctx));
  t.strictSame(held.map((c) => c.candidates[0].content.parts), [[{ text: 'a', thought: true, thoughtSignature: 'U0lH' }]], 'a signature joins its held part');
});

t.test('a stream that ends without its finish: what was held goes out, no finishReason, the array closes', async (t) => {
  const events: CanonEvent[] = [{ type: 'start', id: 'r', model: 'm' }, { type: 'block_start', index: 0, block: { type: 'text' } }, { type: 'delta', index: 0, text: 'cut' }];
  const sse = sseChunks(encodeAll(events, ctx));
  t.strictSame(sse.map((c) => [c.candidates[0].content.parts, c.candidates[0].finishReason]), [[[{ text: 'cut' }], undefined]]);
  const array = JSON.parse(encodeAll(events, ctxFor(clientRequest(requests.streamText, false))));
  t.equal(array.length, 1);
  const errorFirst = JSON.parse(encodeAll([{ type: 'error', error: { status: 429, kind: 'rate_limit', message: 'slow' } }], ctxFor(clientRequest(requests.streamText, false))));
  t.strictSame(errorFirst, [{ error: { code: 429, message: 'slow', status: 'RESOURCE_EXHAUSTED' } }]);
});

t.test('stream encoders keep their own state: two interleaved streams do not mix (§4.11)', async (t) => {
  const a = codec.encodeStream(ctxFor(clientRequest(requests.streamText), 'A'));
  const b = codec.encodeStream(ctxFor(clientRequest(requests.streamText, false), 'B'));
  let outA = a.event({ type: 'start', id: 'ra', model: 'x' });
  let outB = b.event({ type: 'start', id: 'rb', model: 'x' });
  outA += a.event({ type: 'block_start', index: 0, block: { type: 'tool_call', id: 'ca', name: 'f' } });
  outB += b.event({ type: 'block_start', index: 0, block: { type: 'tool_call', id: 'cb', name: 'g' } });
  outA += a.event({ type: 'delta', index: 0, arguments: '{"x":' });
  outB += b.event({ type: 'delta', index: 0, arguments: '{"y":2}' });
  outA += a.event({ type: 'delta', index: 0, arguments: '1}' });
  outA += a.event({ type: 'block_end', index: 0 });
  outB += b.event({ type: 'block_end', index: 0 });
  outA += a.event({ type: 'finish', stop: 'tool_use', usage }) + a.end();
  outB += b.event({ type: 'finish', stop: 'tool_use', usage }) + b.end();
  t.match(sseChunks(outA), [{ candidates: [{ content: { parts: [{ functionCall: { id: 'ca', name: 'f', args: { x: 1 } } }] } }], modelVersion: 'A', responseId: 'ra' }]);
  t.match(JSON.parse(outB), [{ candidates: [{ content: { parts: [{ functionCall: { id: 'cb', name: 'g', args: { y: 2 } } }] } }], modelVersion: 'B', responseId: 'rb' }]);
});
