// An Anthropic account as the upstream of other formats: the hard cases of reference/translation.md §3 and the peers'
// bugs of §4 that touch this format, one test each (turns and tool results, ids and names, schemas, signatures and the
// thinking rules, sampling, structured output, freeform tools, media, refusals, stop reasons, errors).
import t from 'tap';
import type { CanonBlock, CanonMessage, CanonRequest, CanonTool } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { sse } from '../adapters/helpers.ts';
import { ctxFor, decodeAll } from './anthropic-messages-helpers.ts';

const req = (over: Partial<CanonRequest>): CanonRequest => ({ ...requests.text, system: [], temperature: undefined, ...over });
const body = (r: CanonRequest) => codec.encodeRequest(r, ctxFor(r)).body as Record<string, any>;
const u = (...content: CanonBlock[]): CanonMessage => ({ role: 'user', content });
const a = (...content: CanonBlock[]): CanonMessage => ({ role: 'assistant', content });
const txt = (text: string): CanonBlock => ({ type: 'text', text });
const call = (id: string, name = 'get_weather', args = '{"city":"Paris"}'): CanonBlock => ({ type: 'tool_call', id, name, arguments: args });
const result = (callId: string, text: string, isError?: boolean): CanonBlock =>
  ({ type: 'tool_result', callId, content: [{ type: 'text', text }], ...(isError ? { isError } : {}) });
const weather: CanonTool = { kind: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA };

t.test('tool results: every result of a turn first in one user message, same-role turns merged, ids fitted alike', async (t) => {
  // As a chat client sends it: text and calls in separate assistant items, one tool message per result, then text.
  const b = body(req({
    tools: [weather],
    messages: [
      u(txt('Paris and Rome?')),
      a(txt('Checking.')), a(call('functions.get_weather:0')), a(call('call 2', 'get_weather', '{"city":"Rome"}')),
      u(txt('Be quick.')), u(result('call 2', '20 C')), u(result('functions.get_weather:0', 'city not found', true)),
    ],
  }));
  t.equal(b.messages.length, 3, 'user, assistant, user');
  const [id1, id2] = b.messages[1].content.filter((x: any) => x.type === 'tool_use').map((x: any) => x.id);
  t.match(id1, /^[a-zA-Z0-9_-]+$/);
  t.match(id2, /^[a-zA-Z0-9_-]+$/);
  t.not(id1, id2);
  t.strictSame(b.messages[2].content, [
    { type: 'tool_result', tool_use_id: id2, content: [{ type: 'text', text: '20 C' }] },
    { type: 'tool_result', tool_use_id: id1, content: [{ type: 'text', text: 'city not found' }], is_error: true },
    { type: 'text', text: 'Be quick.' },
  ]);
  t.equal(body(req({ messages: [a(call('functions.get_weather:0'))] })).messages[0].content[0].id, id1, 'deterministic: the same id always becomes the same');
  t.equal(body(req({ messages: [a(call('toolu_01A-b_c'))] })).messages[0].content[0].id, 'toolu_01A-b_c', 'a valid id is untouched');
});

t.test('an image inside a tool result stays there (Anthropic carries it)', async (t) => {
  const b = body(req({ messages: [u(txt('shot?')), a(call('c1', 'screenshot', '{}')), u({ type: 'tool_result', callId: 'c1', content: [{ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }] })] }));
  t.strictSame(b.messages[2].content, [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }]);
});

t.test('tool names over 64 characters or with dots are fitted, and restored in answers and streams', async (t) => {
  const long = `mcp__${'very_long_server_name_'.repeat(3)}__fetch.page`;
  const r = req({ tools: [{ kind: 'function', name: long, parameters: { type: 'object', properties: {} } }], toolChoice: { type: 'tool', name: long }, messages: [u(txt('go')), a(call('c1', long, '{}')), u(result('c1', 'ok'))] });
  const b = body(r);
  const fitted = b.tools[0].name;
  t.ok(fitted.length <= 64 && /^[a-zA-Z0-9_-]+$/.test(fitted), fitted);
  t.equal(b.tool_choice.name, fitted);
  t.equal(b.messages[1].content[0].name, fitted);
  const ctx = ctxFor(r);
  const res = codec.decodeResponse({ id: 'msg_1', model: 'm', content: [{ type: 'tool_use', id: 'toolu_1', name: fitted, input: {} }], stop_reason: 'tool_use', usage: {} }, ctx);
  t.equal(res.content[0].type === 'tool_call' && res.content[0].name, long, 'answer: the client\'s name');
  const streamed = collectEvents(decodeAll(sse([
    ['message_start', { type: 'message_start', message: { id: 'msg_2', model: 'm', usage: { input_tokens: 1, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_2', name: fitted, input: {} } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 } }],
    ['message_stop', { type: 'message_stop' }],
  ]), ctx));
  t.equal(streamed.content[0].type === 'tool_call' && streamed.content[0].name, long, 'stream: the client\'s name');
});

t.test('§4.8: a schema without type (a Gemini client\'s) gets type object; none at all an empty object schema', async (t) => {
  const b = body(req({ tools: [
    { kind: 'function', name: 'a', parameters: { properties: { q: { type: 'string' } } } },
    { kind: 'function', name: 'b', parameters: undefined as never },
  ] }));
  t.strictSame(b.tools[0].input_schema, { properties: { q: { type: 'string' } }, type: 'object' });
  t.strictSame(b.tools[1].input_schema, { type: 'object', properties: {} });
});

t.test('§4.4 signatures: only Anthropic\'s own thinking is replayed, byte for byte; another provider\'s is dropped', async (t) => {
  const mine = { type: 'reasoning', text: 'Think: Paris.', signature: { format: 'anthropic-messages', value: 'EqQBsig==' } } as const;
  const redacted = { type: 'reasoning', text: '', redacted: { format: 'anthropic-messages', value: 'EmwKredacted' } } as const;
  const gemini = { type: 'reasoning', text: 'thought', signature: { format: 'gemini', value: 'CiQBgem' } } as const;
  const responses = { type: 'reasoning', text: 'summary', signature: { format: 'openai-responses', value: 'gAAAAenc' } } as const;
  const b = body(req({ messages: [u(txt('q')), a(mine, redacted, gemini, responses, txt('A.'))] }));
  t.strictSame(b.messages[1].content, [
    { type: 'thinking', thinking: 'Think: Paris.', signature: 'EqQBsig==' },
    { type: 'redacted_thinking', data: 'EmwKredacted' },
    { type: 'text', text: 'A.' },
  ]);
  t.notOk(JSON.stringify(b).includes('CiQBgem') || JSON.stringify(b).includes('gAAAAenc'), 'no foreign signature anywhere');
});

t.test('thinking in a tool loop: kept when the loop\'s assistant turn starts with its thinking, off when the history came from elsewhere', async (t) => {
  const loop = (first: CanonBlock): CanonMessage[] => [u(txt('Weather?')), a(first, call('c1')), u(result('c1', '18 C'))];
  const native = body(req({ reasoning: { enabled: true, effort: 'low' }, maxOutputTokens: 4000, tools: [weather], messages: loop({ type: 'reasoning', text: 'hm', signature: { format: 'anthropic-messages', value: 'sig' } }) }));
  t.strictSame(native.thinking, { type: 'enabled', budget_tokens: 1024 });
  t.equal(native.messages[1].content[0].type, 'thinking');
  const foreign = body(req({ reasoning: { enabled: true, effort: 'low' }, maxOutputTokens: 4000, tools: [weather], messages: loop({ type: 'reasoning', text: 'hm', signature: { format: 'gemini', value: 'sig' } }) }));
  t.notOk('thinking' in foreign, 'no valid thinking to open the loop: thinking off rather than a refused request');
  const answered = body(req({ reasoning: { enabled: true }, maxOutputTokens: 4000, messages: [...loop(txt('Let me look.')), a(txt('18 C.')), u(txt('Thanks'))] }));
  t.ok(answered.thinking, 'a finished loop followed by a new user turn needs no replay');
  const prefill = body(req({ reasoning: { enabled: true }, maxOutputTokens: 4000, messages: [u(txt('Weather?')), a(txt('The weather is'))] }));
  t.notOk('thinking' in prefill, 'an assistant prefill: thinking off (the API refuses both)');
});

t.test('thinking budgets: effort table, at least 1024, below max_tokens, off at max_tokens ≤ 1024 or with a forced tool', async (t) => {
  const th = (reasoning: CanonRequest['reasoning'], over: Partial<CanonRequest> = {}) => body(req({ reasoning, maxOutputTokens: 16000, ...over })).thinking;
  t.strictSame(th({ effort: 'medium' }), { type: 'enabled', budget_tokens: 4096 }, 'effort alone turns it on');
  t.strictSame(th({ enabled: true, effort: 'max' }), { type: 'enabled', budget_tokens: 15999 }, '32768 clamped below max_tokens');
  t.strictSame(th({ enabled: true, budgetTokens: 500 }), { type: 'enabled', budget_tokens: 1024 }, 'raised to the minimum');
  t.strictSame(th({ enabled: true, budgetTokens: 31999 }, { maxOutputTokens: 32000 }), { type: 'enabled', budget_tokens: 31999 }, 'Claude Code\'s own budget');
  t.strictSame(th({ enabled: true, budgetTokens: -1 }), { type: 'enabled', budget_tokens: 4096 }, 'dynamic: medium');
  t.equal(th({ enabled: true }, { maxOutputTokens: 1024 }), undefined);
  t.equal(th({ enabled: false, effort: 'high' }), undefined);
  t.equal(th({ effort: 'none' }), undefined);
  t.equal(th({ enabled: true }, { tools: [weather], toolChoice: { type: 'required' } }), undefined, 'any: no thinking');
  t.equal(th({ enabled: true }, { tools: [weather], toolChoice: { type: 'tool', name: 'get_weather' } }), undefined, 'tool: no thinking');
  t.equal(th({ enabled: true }, { output: requests.structured.output }), undefined, 'structured output forces its tool: no thinking');
  const sampled = body(req({ reasoning: { enabled: true }, maxOutputTokens: 16000, temperature: 0.2, topK: 5, topP: 0.5 }));
  t.notOk('temperature' in sampled || 'top_k' in sampled || 'top_p' in sampled, 'thinking refuses changed sampling: dropped');
});

t.test('sampling: temperature clamped to 0–1, top_p dropped beside it, knobs Anthropic lacks dropped', async (t) => {
  t.equal(body(req({ temperature: 1.7 })).temperature, 1);
  t.equal(body(req({ temperature: -0.3 })).temperature, 0);
  const both = body(req({ temperature: 0.4, topP: 0.9, topK: 40, seed: 7, presencePenalty: 0.5, frequencyPenalty: 0.5 }));
  t.strictSame([both.temperature, both.top_p, both.top_k], [0.4, undefined, 40]);
  t.notOk('seed' in both || 'presence_penalty' in both || 'frequency_penalty' in both);
  t.equal(body(req({ topP: 0.9 })).top_p, 0.9, 'top_p alone is kept');
  const gen = body(req({ stop: ['END', ' ', '\n'], user: 'user-42', stream: true }));
  t.strictSame([gen.stop_sequences, gen.metadata, gen.stream], [['END'], { user_id: 'user-42' }, true], 'whitespace stop sequences dropped (refused by the API)');
});

t.test('what would change the answer is refused in the client\'s terms: n > 1, logprobs', async (t) => {
  t.throws(() => body(req({ n: 2 })), { status: 400, code: 'not_translatable', param: 'n' });
  t.throws(() => body(req({ logprobs: true })), { status: 400, code: 'not_translatable', param: 'logprobs' });
  t.throws(() => body(req({ topLogprobs: 3 })), { status: 400, code: 'not_translatable', param: 'top_logprobs' });
  t.doesNotThrow(() => body(req({ n: 1 })));
});

t.test('structured output: a forced tool named after the schema, its input back as the answer text with stop end', async (t) => {
  const ctx = ctxFor(requests.structured);
  const res = codec.decodeResponse({ id: 'msg_s', model: 'm', content: [{ type: 'tool_use', id: 'toolu_s', name: 'city', input: { name: 'Oslo' } }], stop_reason: 'tool_use', usage: { input_tokens: 9, output_tokens: 4 } }, ctx);
  t.strictSame(res.content, [{ type: 'text', text: '{"name":"Oslo"}' }]);
  t.equal(res.stop, 'end');
  const streamed = collectEvents(decodeAll(sse([
    ['message_start', { type: 'message_start', message: { id: 'msg_s', model: 'm', usage: { input_tokens: 9, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_s', name: 'city', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"name": ' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } }],
    ['message_stop', { type: 'message_stop' }],
  ]), ctx));
  t.strictSame([streamed.content, streamed.stop], [[{ type: 'text', text: '{"name":"Oslo"}' }], 'end'], 'streamed: the same text and stop');

  const list = req({ output: { type: 'json_schema', name: 'cities', schema: { type: 'array', items: { type: 'string' } } } });
  t.strictSame(body(list).tools[0].input_schema, { type: 'object', properties: { value: { type: 'array', items: { type: 'string' } } }, required: ['value'] }, 'a non-object root rides in value');
  t.strictSame(codec.decodeResponse({ id: 'x', model: 'm', content: [{ type: 'tool_use', id: 't', name: 'cities', input: { value: ['Oslo'] } }], stop_reason: 'tool_use', usage: {} }, ctxFor(list)).content,
    [{ type: 'text', text: '["Oslo"]' }]);
  t.strictSame(body(req({ output: { type: 'json_object' } })).tool_choice, { type: 'tool', name: 'json_output' }, 'json_object: a free object');

  const withTools = body(req({ output: requests.structured.output, tools: [weather], toolChoice: { type: 'auto' } }));
  t.strictSame([withTools.tools.map((x: any) => x.name), withTools.tool_choice], [['get_weather', 'city'], { type: 'any' }], 'with the client\'s tools: call one or answer');
  const mixed = codec.decodeResponse({ id: 'x', model: 'm', content: [{ type: 'tool_use', id: 't', name: 'get_weather', input: { city: 'Oslo' } }], stop_reason: 'tool_use', usage: {} }, ctxFor(req({ output: requests.structured.output, tools: [weather] })));
  t.equal(mixed.stop, 'tool_use', 'a real call stays a call');
});

t.test('a freeform (custom) tool: a function of one string `input`, its grammar in the description, calls unwrapped', async (t) => {
  const patch: CanonTool = { kind: 'custom', name: 'apply_patch', description: 'Apply a patch.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' } };
  const raw = '*** Begin Patch\n+x\n*** End Patch';
  const r = req({ tools: [patch], messages: [u(txt('edit')), a({ type: 'tool_call', id: 'c1', name: 'apply_patch', arguments: raw, custom: true }), u(result('c1', 'done'))] });
  const b = body(r);
  t.strictSame(b.tools[0], {
    name: 'apply_patch', description: 'Apply a patch.\n\nThe input must follow this lark grammar:\nstart: "*** Begin Patch"',
    input_schema: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
  });
  t.strictSame(b.messages[1].content[0].input, { input: raw });
  const ctx = ctxFor(r);
  t.strictSame(codec.decodeResponse({ id: 'x', model: 'm', content: [{ type: 'tool_use', id: 't', name: 'apply_patch', input: { input: raw } }], stop_reason: 'tool_use', usage: {} }, ctx).content,
    [{ type: 'tool_call', id: 't', name: 'apply_patch', arguments: raw, custom: true }]);
  const streamed = collectEvents(decodeAll(sse([
    ['message_start', { type: 'message_start', message: { id: 'm1', model: 'm', usage: {} } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'apply_patch', input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ input: raw }).slice(0, 12) } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ input: raw }).slice(12) } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } }],
    ['message_stop', { type: 'message_stop' }],
  ]), ctx));
  t.strictSame(streamed.content, [{ type: 'tool_call', id: 't', name: 'apply_patch', arguments: raw, custom: true }]);
});

t.test('media: PDFs and text files as documents, an image file as an image, url sources kept, another provider\'s file id refused', async (t) => {
  const file = (source: any, filename?: string): CanonBlock => ({ type: 'file', source, ...(filename ? { filename } : {}) });
  const b = body(req({ messages: [u(
    file({ kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, 'a.pdf'),
    file({ kind: 'base64', mediaType: 'text/plain', data: Buffer.from('hello').toString('base64') }),
    file({ kind: 'base64', mediaType: 'image/jpeg', data: '/9j/' }),
    file({ kind: 'url', url: 'https://example.com/a.pdf' }),
    file({ kind: 'file', format: 'anthropic-messages', id: 'file_011' }),
  )] }));
  t.strictSame(b.messages[0].content, [
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' } },
    { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
    { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
    { type: 'document', source: { type: 'file', file_id: 'file_011' } },
  ]);
  t.throws(() => body(req({ messages: [u(file({ kind: 'file', format: 'openai-chat', id: 'file-abc' }))] })), { status: 400, code: 'not_translatable', param: 'messages.0.content.0' });
  t.throws(() => body(req({ messages: [u(file({ kind: 'base64', mediaType: 'application/zip', data: 'UEs=' }))] })), { status: 400, code: 'not_translatable' });
});

t.test('system: leading system messages join the system prompt; empty text and a prefill\'s trailing space never reach the API', async (t) => {
  const b = body(req({ system: [{ type: 'text', text: 'A', cache: { ttl: '1h' } }], messages: [
    { role: 'system', content: [txt('B')] }, u(txt('hi'), txt('')), a(txt('Sure: '), txt('')),
  ] }));
  t.strictSame(b.system, [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral', ttl: '1h' } }, { type: 'text', text: 'B' }]);
  t.strictSame(b.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: [{ type: 'text', text: 'Sure:' }] }]);
});

t.test('count_tokens: only the fields the counting endpoint takes', async (t) => {
  const r = req({ operation: 'count_tokens', maxOutputTokens: 100, temperature: 0.3, stop: ['x'], user: 'u', stream: true, reasoning: { enabled: true }, tools: [weather], toolChoice: { type: 'auto' } });
  t.strictSame(Object.keys(body(r)).sort(), ['messages', 'model', 'tool_choice', 'tools']);
  t.strictSame(codec.decodeCount({ input_tokens: 2095 }), { inputTokens: 2095 });
  t.throws(() => codec.decodeCount({ tokens: 1 }), { status: 502, code: 'upstream_invalid' });
});

t.test('stop reasons, one table both ways', async (t) => {
  const stopOf = (stop_reason: string) => codec.decodeResponse({ id: 'x', model: 'm', content: [], stop_reason, usage: {} }, ctxFor(requests.text)).stop;
  t.strictSame(['end_turn', 'stop_sequence', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'refusal', 'pause_turn', 'something_new'].map(stopOf),
    ['end', 'stop_sequence', 'max_tokens', 'max_tokens', 'tool_use', 'content_filter', 'pause', 'end']);
  const encoded = (['end', 'stop_sequence', 'max_tokens', 'tool_use', 'content_filter', 'pause'] as const)
    .map((stop) => (codec.encodeResponse({ id: 'x', model: 'm', content: [], stop, usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 } }, ctxFor(requests.text)) as any).stop_reason);
  t.strictSame(encoded, ['end_turn', 'stop_sequence', 'max_tokens', 'tool_use', 'refusal', 'pause_turn']);
});

t.test('upstream errors read by type, else by status; a spend limit keeps its code', async (t) => {
  const err = (status: number, type: string, message = 'm') => codec.decodeError(status, JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_1' }));
  t.strictSame(err(529, 'overloaded_error', 'Overloaded'), { status: 529, kind: 'overloaded', message: 'Overloaded', code: 'overloaded_error' });
  t.strictSame(['invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'request_too_large', 'rate_limit_error', 'api_error', 'timeout_error'].map((type) => err(400, type).kind),
    ['invalid_request', 'authentication', 'billing', 'permission', 'not_found', 'request_too_large', 'rate_limit', 'server', 'timeout']);
  t.strictSame(codec.decodeError(429, JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'spend', details: { error_code: 'enforced_spend_limit_reached' } } })).code, 'enforced_spend_limit_reached');
  t.strictSame(codec.decodeError(502, '<html>Bad gateway</html>'), { status: 502, kind: 'server', message: '<html>Bad gateway</html>' });
  t.strictSame(codec.decodeError(529, ''), { status: 529, kind: 'overloaded', message: 'The upstream failed (HTTP 529)' });
  t.equal(codec.decodeError(503, '').kind, 'overloaded');
});
