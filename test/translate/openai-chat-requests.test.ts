// The chat codec's request side against the hard cases (reference translation.md §3, §4) and the realistic agent request:
// tool choice spellings, tool result placement, names over the limit, system prompts, media, strict schemas, reasoning,
// parameters refused or dropped, legacy functions, hostile bodies.
import t from 'tap';
import { codec } from '../../adapters/openai-chat/codec/index.ts';
import { DROPPED } from '../../adapters/openai-chat/codec/decode-request.ts';
import { fitName, OPENAI_NAMES } from '../../adapters/shared/tool-names.ts';
import type { CanonMessage, CanonRequest } from '../../core/canonical.ts';
import { GatewayError } from '../../core/errors.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { agentRequest, ctxFor, PNG } from './openai-chat-fixtures.ts';

type Body = Record<string, any>;
const decode = (body: Body) => codec.decodeRequest(structuredClone(body), 'generate', { model: 'model-x', path: '/v1/chat/completions', query: '' });
const encode = (req: CanonRequest): Body => codec.encodeRequest(req, ctxFor(req)).body;
const userText = (text: string): CanonMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const chat = (extra: Body) => ({ model: 'model-x', messages: [{ role: 'user', content: 'Hi' }], ...extra });
const weather = { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } };

/** What the real API checks of tool messages: each answers a call of the assistant message just before the run. */
function chatPairingProblem(messages: Body[]): string | undefined {
  let pending: Set<string> | undefined;
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!pending?.delete(m.tool_call_id)) return `tool message ${m.tool_call_id} answers no call`;
      continue;
    }
    if (pending && pending.size > 0) return `calls left unanswered: ${[...pending]}`;
    pending = m.role === 'assistant' && m.tool_calls ? new Set(m.tool_calls.map((c: Body) => c.id)) : undefined;
  }
  return pending && pending.size > 0 ? `calls left unanswered: ${[...pending]}` : undefined;
}

t.test('the realistic agent request decodes without loss of what matters, and re-encodes into a valid chat body', async (t) => {
  const req = decode(agentRequest);
  t.strictSame(req.system, [{ type: 'text', text: 'You are a coding agent. Work in small verified steps.' }, { type: 'text', text: 'Project rules: TypeScript, no new dependencies.' }], 'system and developer prompts');
  t.strictSame(req.messages.map((m) => [m.role, m.content.map((b) => b.type)]), [
    ['user', ['text', 'image']],
    ['assistant', ['text', 'tool_call', 'tool_call']],
    ['user', ['tool_result', 'tool_result']],
    ['assistant', ['tool_call']],
    ['user', ['tool_result', 'text']],
    ['assistant', ['tool_call']],
    ['user', ['tool_result']],
  ], 'turns: tool results gathered into one user message, a user message right after them merged in');
  t.match(req.messages[0].content[1], { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG }, detail: 'high' });
  t.strictSame(req.messages[3].content[0], { type: 'tool_call', id: 'call_patch', name: 'apply_patch', arguments: '*** Begin Patch\n*** Update File: src/sum.ts\n-a - b\n+a + b\n*** End Patch', custom: true });
  t.strictSame(req.tools.map((tool) => [tool.kind, tool.name]), [['function', 'read_file'], ['function', 'list_dir'], ['function', 'shell'], ['custom', 'apply_patch']]);
  t.match(req.tools[0], { strict: true, parameters: { additionalProperties: false } });
  t.strictSame(req.tools[3], { kind: 'custom', name: 'apply_patch', description: 'Edit files with a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"' } });
  t.match(req, { toolChoice: { type: 'auto' }, parallelToolCalls: true, maxOutputTokens: 32000, stream: true, user: 'user-42', reasoning: { enabled: true, effort: 'medium', show: true } });
  t.strictSame(req.extras, { 'openai-chat': { includeUsage: true } });
  const text = JSON.stringify(req);
  for (const gone of ['sess-1', 'cache-sess-1', 'verbosity', 'service_tier', 'metadata']) t.notMatch(text, gone, `${gone} is dropped`);

  // What any target needs of the canonical request: each result answers a call of the assistant turn before it, results
  // come first in their message, no empty text, object schemas.
  req.messages.forEach((m, i) => {
    const results = m.content.filter((b) => b.type === 'tool_result');
    if (results.length === 0) return;
    const calls = new Set(req.messages[i - 1].content.flatMap((b) => (b.type === 'tool_call' ? [b.id] : [])));
    t.ok(results.every((r) => r.type === 'tool_result' && calls.has(r.callId)), `message ${i}: results answer the previous turn's calls`);
    t.ok(m.content.slice(0, results.length).every((b) => b.type === 'tool_result'), `message ${i}: results first`);
  });
  t.notOk(text.includes('"text":""'), 'no empty text block');
  t.ok(req.tools.every((tool) => tool.kind === 'custom' || tool.parameters.type === 'object'), 'object schemas');

  const body = encode(req);
  t.equal(chatPairingProblem(body.messages), undefined, 'tool messages pair with their calls');
  t.strictSame(body.messages.map((m: Body) => m.role), ['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'user', 'assistant', 'tool']);
  t.equal(body.messages[0].content, 'You are a coding agent. Work in small verified steps.\n\nProject rules: TypeScript, no new dependencies.');
  t.strictSame(body.messages[5].tool_calls, agentRequest.messages[6].tool_calls, 'the custom tool call goes back as it came');
  t.strictSame(body.tools[3], agentRequest.tools[3], 'the custom tool and its grammar go back as they came');
  t.strictSame(body.tools.slice(0, 3), agentRequest.tools.slice(0, 3), 'function tools as they came (read_file already strict)');
  t.match(body, { tool_choice: 'auto', parallel_tool_calls: true, reasoning_effort: 'medium', max_completion_tokens: 32000, stream: true, stream_options: { include_usage: true }, user: 'user-42' });
  for (const gone of DROPPED) t.notOk(gone in body, `${gone} not sent`);
});

t.test('tool_choice in every chat spelling, both ways', async (t) => {
  const cases: [unknown, unknown][] = [
    ['auto', { type: 'auto' }], ['none', { type: 'none' }], ['required', { type: 'required' }],
    [{ type: 'function', function: { name: 'get_weather' } }, { type: 'tool', name: 'get_weather' }],
  ];
  for (const [chatChoice, canonical] of cases) {
    const req = decode(chat({ tools: [weather], tool_choice: chatChoice }));
    t.strictSame(req.toolChoice, canonical, `${JSON.stringify(chatChoice)} decodes`);
    t.strictSame(encode(req).tool_choice, chatChoice, `${JSON.stringify(chatChoice)} encodes back`);
  }
  const custom = decode(chat({ tools: [{ type: 'custom', custom: { name: 'apply_patch' } }], tool_choice: { type: 'custom', custom: { name: 'apply_patch' } } }));
  t.strictSame(custom.toolChoice, { type: 'tool', name: 'apply_patch' });
  t.strictSame(encode(custom).tool_choice, { type: 'custom', custom: { name: 'apply_patch' } }, 'a named custom tool stays custom');
  const allowed = decode(chat({
    tools: [weather, { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }],
    tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_time' } }] } },
  }));
  t.strictSame([allowed.toolChoice, allowed.tools.map((x) => x.name)], [{ type: 'required' }, ['get_time']], 'allowed_tools narrows the tools');
  const legacy = decode(chat({ functions: [{ name: 'get_weather', parameters: WEATHER_SCHEMA }], function_call: { name: 'get_weather' } }));
  t.strictSame([legacy.tools, legacy.toolChoice], [[{ kind: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA }], { type: 'tool', name: 'get_weather' }], 'legacy functions and function_call');
  t.strictSame(decode(chat({ functions: [{ name: 'f' }], function_call: 'none' })).toolChoice, { type: 'none' });
  t.throws(() => decode(chat({ tools: [weather], tool_choice: 'sometimes' })), { name: 'GatewayError', status: 400, param: 'tool_choice' });
  t.notOk('tool_choice' in encode({ ...requests.text, toolChoice: { type: 'auto' }, parallelToolCalls: false }), 'no tool_choice without tools (OpenAI refuses it)');
  t.notOk('parallel_tool_calls' in encode({ ...requests.text, parallelToolCalls: false }), 'nor parallel_tool_calls');
  t.throws(() => decode(chat({ tools: [{ type: 'web_search' }] })), { name: 'GatewayError', status: 400, code: 'unsupported_value', param: 'tools[0].type' }, 'built-in tools refused');
});

t.test('tool results: one tool message per call right after the assistant turn, media moved to a user message, is_error as a prefix', async (t) => {
  const req: CanonRequest = {
    ...requests.toolRoundTrip,
    messages: [
      userText('Two charts please'),
      { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'chart', arguments: '{}' }, { type: 'tool_call', id: 'c2', name: 'chart', arguments: '{}' }] },
      {
        role: 'user', content: [
          { type: 'text', text: 'Here you go' },
          { type: 'tool_result', callId: 'c1', content: [{ type: 'text', text: 'chart one' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG } }] },
          { type: 'tool_result', callId: 'c2', content: [{ type: 'text', text: 'no data' }, { type: 'text', text: 'for 2025' }], isError: true },
        ],
      },
    ],
  };
  t.strictSame(encode(req).messages.slice(3), [
    { role: 'tool', tool_call_id: 'c1', content: 'chart one' },
    { role: 'tool', tool_call_id: 'c2', content: '[tool error] no data\nfor 2025' },
    {
      role: 'user', content: [
        { type: 'text', text: 'Tool result c1 (continued):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'text', text: 'Here you go' },
      ],
    },
  ]);
  const back = decode({ model: 'm', messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c2', content: '[tool error] no data' }] });
  t.strictSame(back.messages[2].content, [{ type: 'tool_result', callId: 'c2', content: [{ type: 'text', text: 'no data' }], isError: true }], 'the prefix reads back as isError');
});

t.test('tool names over 64 characters or with other characters are fitted on the way up', async (t) => {
  const long = `mcp__github__${'create_or_update_file_contents_'.repeat(3)}x`;
  const dotted = 'files.read';
  const req: CanonRequest = {
    ...requests.forcedTool,
    tools: [{ kind: 'function', name: long, parameters: { type: 'object' } }, { kind: 'function', name: dotted, parameters: { type: 'object' } }],
    toolChoice: { type: 'tool', name: long },
    messages: [userText('go'), { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: dotted, arguments: '{}' }] }, { role: 'user', content: [{ type: 'tool_result', callId: 'c', content: [] }] }],
  };
  const body = encode(req);
  const names = body.tools.map((x: Body) => x.function.name);
  t.ok(names.every((n: string) => n.length <= 64 && /^[a-zA-Z0-9_-]+$/.test(n)), 'every name fits');
  t.strictSame(names, [fitName(long, OPENAI_NAMES), fitName(dotted, OPENAI_NAMES)]);
  t.equal(body.tool_choice.function.name, names[0], 'the forced tool under its fitted name');
  t.equal(body.messages[1].tool_calls[0].function.name, names[1], 'history calls under their fitted names');
  // Restoring the client's names from the answer is checked on the answer side (openai-chat-answers.test.ts).
});

t.test('system prompts: developer is system; a later system or developer message stays in place', async (t) => {
  const req = decode({ model: 'm', messages: [{ role: 'developer', content: 'Dev rules' }, { role: 'user', content: 'Hi' }, { role: 'developer', content: [{ type: 'text', text: 'Switch to French' }] }, { role: 'user', content: 'Bonjour' }] });
  t.strictSame(req.system, [{ type: 'text', text: 'Dev rules' }]);
  t.strictSame(req.messages[1], { role: 'system', content: [{ type: 'text', text: 'Switch to French' }] });
  t.strictSame(encode(req).messages, [
    { role: 'system', content: 'Dev rules' }, { role: 'user', content: 'Hi' }, { role: 'system', content: 'Switch to French' }, { role: 'user', content: 'Bonjour' },
  ]);
  t.throws(() => decode({ model: 'm', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }), { name: 'GatewayError', status: 400 }, 'system parts are text only');
});

t.test('images and files: data URLs and http URLs both ways, file ids and file data, audio refused', async (t) => {
  const req = decode({
    model: 'm', messages: [{
      role: 'user', content: [
        { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'low' } },
        { type: 'image_url', image_url: 'https://example.com/a.png' },
        { type: 'file', file: { file_id: 'file-abc' } },
        { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
      ],
    }],
  });
  t.strictSame(req.messages[0].content, [
    { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' }, detail: 'low' },
    { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
    { type: 'file', source: { kind: 'file', format: 'openai-chat', id: 'file-abc' } },
    { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' }, filename: 'spec.pdf' },
  ]);
  t.strictSame(encode(req).messages[0].content, [
    { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'low' } },
    { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    { type: 'file', file: { file_id: 'file-abc' } },
    { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
  ]);
  t.throws(() => decode({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] }), { name: 'GatewayError', status: 400, param: 'messages[0].content[0].image_url.url' });
  t.throws(() => decode({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }), { name: 'GatewayError', status: 400, code: 'unsupported_value', param: 'messages[0].content[0].type' });
  const urlFile: CanonRequest = { ...requests.text, messages: [{ role: 'user', content: [{ type: 'file', source: { kind: 'url', url: 'https://example.com/a.pdf' } }] }] };
  t.throws(() => encode(urlFile), { name: 'GatewayError', status: 400, code: 'unsupported_value' }, 'a file by URL cannot go to a chat upstream');
  const geminiFile: CanonRequest = { ...requests.text, messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'file', format: 'gemini', id: 'files/abc' } }] }] };
  t.throws(() => encode(geminiFile), { name: 'GatewayError', status: 400 }, 'another provider\'s file handle is refused, never sent');
  const bytes: CanonRequest = { ...requests.text, messages: [{ role: 'user', content: [{ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' } }] }] };
  t.strictSame(encode(bytes).messages[1].content, [{ type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } }], 'a file without a name gets one');
});

t.test('structured output and strict tools: schemas made strict only when strict', async (t) => {
  const loose = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, where: { type: 'object', properties: { lat: { type: 'number' } } } }, required: ['city'] };
  const strict = {
    type: 'object', additionalProperties: false, required: ['city', 'days', 'where'],
    properties: { city: { type: 'string' }, days: { type: ['integer', 'null'] }, where: { type: ['object', 'null'], properties: { lat: { type: ['number', 'null'] } }, required: ['lat'], additionalProperties: false } },
  };
  const req: CanonRequest = {
    ...requests.text,
    tools: [{ kind: 'function', name: 'a', parameters: loose, strict: true }, { kind: 'function', name: 'b', parameters: loose }],
    output: { type: 'json_schema', name: 'forecast', schema: loose, strict: true },
  };
  const body = encode(req);
  t.strictSame(body.tools[0].function.parameters, strict, 'strict tool: closed, all required, optional ones nullable');
  t.strictSame(body.tools[1].function.parameters, loose, 'loose tool untouched');
  t.strictSame(body.response_format, { type: 'json_schema', json_schema: { name: 'forecast', schema: strict, strict: true } });
  t.strictSame(encode({ ...requests.text, output: { type: 'json_object' } }).response_format, { type: 'json_object' });
  t.notOk('response_format' in encode({ ...requests.text, output: { type: 'text' } }), 'text output is the default');
  t.strictSame(decode(chat({ response_format: { type: 'json_object' } })).output, { type: 'json_object' });
  t.strictSame(loose.properties.days, { type: 'integer' }, 'the request\'s own schema is not changed');
});

t.test('reasoning: effort named or derived from a budget; reasoning history and every signature dropped', async (t) => {
  const effort = (reasoning: CanonRequest['reasoning']) => encode({ ...requests.text, reasoning }).reasoning_effort;
  t.equal(effort({ effort: 'low' }), 'low');
  t.equal(effort({ enabled: true, budgetTokens: 1024 }), 'low');
  t.equal(effort({ enabled: true, budgetTokens: 2048 }), 'medium');
  t.equal(effort({ enabled: true, budgetTokens: 10240 }), 'high');
  t.equal(effort({ enabled: true, budgetTokens: 31999 }), 'high', 'budgets never ask for xhigh');
  t.equal(effort({ enabled: true, budgetTokens: -1 }), undefined, 'dynamic: the upstream\'s default');
  t.equal(effort({ enabled: false }), undefined, 'off: nothing sent (older models refuse "none")');
  t.strictSame(decode(chat({ reasoning_effort: 'none' })).reasoning, { enabled: false, effort: 'none' });
  t.throws(() => decode(chat({ reasoning_effort: 'extreme' })), { name: 'GatewayError', status: 400, param: 'reasoning_effort' });
  const history: CanonRequest = {
    ...requests.text,
    messages: [userText('q'), {
      role: 'assistant', content: [
        { type: 'reasoning', text: 'thinking', signature: { format: 'anthropic-messages', value: 'SIG-ANTHROPIC' } },
        { type: 'text', text: 'a', signature: { format: 'gemini', value: 'SIG-GEMINI' } },
        { type: 'tool_call', id: 'c', name: 'f', arguments: '{}', signature: { format: 'gemini', value: 'SIG-CALL' } },
      ],
    }, { role: 'user', content: [{ type: 'tool_result', callId: 'c', content: [{ type: 'text', text: 'ok' }] }] }],
  };
  const text = JSON.stringify(encode(history));
  t.notMatch(text, /SIG-|thinking/, 'no reasoning text and no signature of any provider reaches a chat upstream');
  const input = decode({ model: 'm', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a', reasoning_content: 'secret chain' }] });
  t.notMatch(JSON.stringify(input), /secret chain/, 'reasoning_content on input is ignored');
});

t.test('parameters: sampling mapped and clamped, what a chat answer cannot hold refused, harmless ones dropped', async (t) => {
  const req = decode(chat({ temperature: 1.5, top_p: 0.9, stop: 'END', seed: 7, presence_penalty: 0.5, frequency_penalty: -0.5, n: 1, max_tokens: 50, user: 'u1', logit_bias: { 50256: -100 }, top_logprobs: 2 }));
  t.match(req, { temperature: 1.5, topP: 0.9, stop: ['END'], seed: 7, presencePenalty: 0.5, frequencyPenalty: -0.5, maxOutputTokens: 50, user: 'u1', topLogprobs: 2 });
  t.notOk('n' in req, 'n: 1 is the default');
  t.equal(decode(chat({ n: 3 })).n, 3, 'n > 1 is kept for the target to refuse (Gemini can give several)');
  t.equal(decode(chat({ max_completion_tokens: 10, max_tokens: 99 })).maxOutputTokens, 10, 'max_completion_tokens wins');
  t.equal(decode(chat({ logprobs: true })).logprobs, true);
  t.match(encode({ ...requests.text, temperature: 2.5, topK: 40, topP: 1.2 }), { temperature: 2, top_p: 1 });
  t.notOk('top_k' in encode({ ...requests.text, topK: 40 }), 'top_k dropped: chat has none');
  t.throws(() => encode({ ...requests.text, n: 2 }), { name: 'GatewayError', status: 400, param: 'n' });
  t.throws(() => encode({ ...requests.text, logprobs: true }), { name: 'GatewayError', status: 400, param: 'logprobs' });
  t.throws(() => encode({ ...requests.text, stop: ['a', 'b', 'c', 'd', 'e'] }), { name: 'GatewayError', status: 400, param: 'stop' });
  const long = 'user_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef_account__session_0f3c2b9e';
  t.match(encode({ ...requests.text, user: long }).user, /^[0-9a-f]{64}$/, 'an end-user id over 64 characters is hashed to fit');
  t.equal(encode({ ...requests.text, user: long }).user, encode({ ...requests.text, user: long }).user, 'the same id always');
  t.throws(() => decode(chat({ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } })), { name: 'GatewayError', status: 400, code: 'unsupported_value', param: 'modalities' });
  t.throws(() => decode(chat({ web_search_options: {} })), { name: 'GatewayError', status: 400, param: 'web_search_options' });
  for (const [field, value] of [['temperature', 3], ['top_p', -1], ['max_completion_tokens', 0], ['n', 1.5], ['stop', ['a', 'b', 'c', 'd', 'e']], ['presence_penalty', 9]] as const) {
    t.throws(() => decode(chat({ [field]: value })), { name: 'GatewayError', status: 400, param: field }, `${field}: ${JSON.stringify(value)} refused`);
  }
  const dropped = decode(chat(Object.fromEntries(DROPPED.map((k) => [k, k === 'store' ? true : { x: 'DROPPED-VALUE' }]))));
  t.notMatch(JSON.stringify(dropped), /DROPPED-VALUE/, `dropped: ${DROPPED.join(', ')}`);
});

t.test('legacy function_call and function messages pair up with ids of their own', async (t) => {
  const req = decode({
    model: 'm', messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { role: 'function', name: 'get_weather', content: '3 C' },
    ],
  });
  t.strictSame(req.messages.slice(1), [
    { role: 'assistant', content: [{ type: 'tool_call', id: 'call_fn_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'call_fn_1', content: [{ type: 'text', text: '3 C' }] }] },
  ]);
  t.equal(chatPairingProblem(encode(req).messages), undefined, 'and go up as a valid tool_calls / tool pair');
});

t.test('hostile bodies: every wrong type is a 400 naming the parameter', async (t) => {
  const cases: [Body, string][] = [
    [{ messages: 'hi' }, 'messages'],
    [{ messages: [] }, 'messages'],
    [{ messages: [42] }, 'messages[0]'],
    [{ messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }, 'messages[0].content[0].text'],
    [{ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 1 } }] }] }, 'messages[0].tool_calls[0].function.name'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
    [{ messages: [{ role: 'user', content: 'x' }], tools: {} }, 'tools'],
    [{ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f', parameters: 'no' } }] }, 'tools[0].function.parameters'],
    [{ messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, 'stream'],
    [{ messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
  ];
  for (const [body, param] of cases) {
    let thrown: unknown;
    try { decode({ model: 'm', ...body }); } catch (err) { thrown = err; }
    t.ok(thrown instanceof GatewayError, `${param}: a GatewayError`);
    t.match(thrown, { name: 'GatewayError', status: 400, param }, param);
  }
});
