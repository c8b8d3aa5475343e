// Claude Code and the Anthropic SDK as clients of another format: the recorded Claude Code request decoded without
// loss, its next turn carrying another provider's signatures home, everything a Messages body can say, server tools
// and hostile bodies refused with a 400 naming the field, and the stream encoder's hard cases (§3, §4.1, §4.2, §4.11).
import t from 'tap';
import type { CanonEvent, CanonRequest } from '../../core/canonical.ts';
import { GatewayError } from '../../core/errors.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { requests, streams } from './canonical-fixtures.ts';
import { claudeCodeBody, ctxFor, decodeAll, encodeAll, grammarProblems, wireEvents } from './anthropic-messages-helpers.ts';

const decode = (body: Record<string, unknown>, model = 'gpt-5') => codec.decodeRequest(body, 'generate', { model, path: '/v1/messages', query: 'beta=true' });
const base = { model: 'claude-sonnet-4-5', max_tokens: 1000 };
const one = (content: unknown) => decode({ ...base, messages: [{ role: 'user', content }] }).messages[0].content;

t.test('the recorded Claude Code request decodes without loss of tools, system, messages or reasoning settings', async (t) => {
  const body = claudeCodeBody();
  const req = decode(body);
  t.equal(req.model, 'gpt-5', 'the model the upstream is asked for');
  t.equal(req.stream, true);
  t.equal(req.maxOutputTokens, 32000);
  t.strictSame(req.system, body.system.map((b: any) => ({ type: 'text', text: b.text, ...(b.cache_control ? { cache: {} } : {}) })), 'system blocks with their cache hints');
  t.strictSame(req.messages, [{ role: 'user', content: body.messages[0].content.map((b: any) => ({ type: 'text', text: b.text })) }]);
  t.strictSame(req.tools, body.tools.map((tool: any) => ({ kind: 'function', name: tool.name, description: tool.description, parameters: tool.input_schema })), 'every tool, its schema untouched');
  t.strictSame(req.reasoning, { enabled: true, budgetTokens: 31999, show: false }, 'thinking on, its budget, display omitted');
  t.equal(req.user, body.metadata.user_id);
  t.strictSame(req.extras, { 'anthropic-messages': { context_management: body.context_management } }, 'the context-management beta rides in extras');
  // Nothing Anthropic-only leaks outside extras: another format's encoder reads only canonical fields.
  const neutral = JSON.stringify({ ...req, extras: {}, tools: [] });
  for (const word of ['cache_control', 'input_schema', 'budget_tokens', 'tool_use', 'user_id', 'context_management']) t.notOk(neutral.includes(`"${word}"`), `no ${word}`);
  t.ok(req.tools.every((tool) => tool.kind === 'function' && tool.parameters.type === 'object'), 'object schemas every target can take');

  const again = codec.encodeRequest(req, ctxFor(req)).body as Record<string, any>;
  t.strictSame([again.system, again.tools, again.thinking, again.max_tokens, again.metadata],
    [body.system, body.tools, { type: 'enabled', budget_tokens: 31999 }, 32000, body.metadata], 'and it encodes back to the same system, tools, thinking and limits');
});

t.test('Claude Code\'s next turn brings another provider\'s reasoning and call home unchanged', async (t) => {
  // What a Responses upstream answered, through Claude Code and back.
  const answer: CanonRequest['messages'][number]['content'] = [
    { type: 'reasoning', text: 'List files.', signature: { format: 'openai-responses', value: 'gAAAAB-enc' } },
    { type: 'tool_call', id: 'call_abc', name: 'Bash', arguments: '{"command":"ls"}' },
  ];
  const message = codec.encodeResponse({ id: 'resp_1', model: 'gpt-5', content: answer, stop: 'tool_use', usage: { input: 10, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 2 } }, ctxFor(requests.text, 'claude-sonnet-4-5')) as Record<string, any>;
  t.strictSame(message.content[0], { type: 'thinking', thinking: 'List files.', signature: 'gw1:openai-responses:gAAAAB-enc' }, 'wrapped, so the client echoes it untouched');
  const body = claudeCodeBody();
  const next = decode({ ...body, messages: [...body.messages, { role: 'assistant', content: message.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_abc', content: 'a.txt' }] }] });
  t.strictSame(next.messages[1], { role: 'assistant', content: answer }, 'the signature is Responses\' again, the call as it was');
  const streamed = wireEvents(encodeAll([
    { type: 'start', id: 'resp_1', model: 'gpt-5' },
    { type: 'block_start', index: 0, block: { type: 'reasoning' } },
    { type: 'delta', index: 0, signature: { format: 'gemini', value: 'CiQB' } },
    { type: 'block_end', index: 0 },
    { type: 'finish', stop: 'end' },
  ], ctxFor(requests.text)));
  t.strictSame(streamed[2].data.delta, { type: 'signature_delta', signature: 'gw1:gemini:CiQB' }, 'streamed: wrapped the same way');
});

t.test('everything else a Messages body says: thinking forms, tool choice, cache hints, documents, redacted thinking', async (t) => {
  const reasoning = (thinking: unknown, extra = {}) => decode({ ...base, messages: [], thinking, ...extra }).reasoning;
  t.strictSame(reasoning({ type: 'adaptive', display: 'summarized' }, { output_config: { effort: 'max' } }), { enabled: true, effort: 'max', show: true });
  t.strictSame(reasoning({ type: 'disabled' }), { enabled: false });
  t.strictSame(reasoning(undefined, { output_config: { effort: 'low' } }), { effort: 'low' });
  const choice = (tool_choice: unknown) => { const r = decode({ ...base, messages: [], tool_choice }); return [r.toolChoice, r.parallelToolCalls]; };
  t.strictSame(choice({ type: 'any', disable_parallel_tool_use: true }), [{ type: 'required' }, false]);
  t.strictSame(choice({ type: 'tool', name: 'Bash' }), [{ type: 'tool', name: 'Bash' }, undefined]);
  t.strictSame(choice({ type: 'none' }), [{ type: 'none' }, undefined]);

  const cc = { type: 'ephemeral', ttl: '1h' };
  const r = decode({ ...base, top_k: 5, service_tier: 'auto', tools: [{ name: 'x', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' }, strict: true }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: cc, citations: [{ type: 'char_location' }] }] }] });
  t.strictSame([r.topK, r.tools, r.messages[0].content, r.extras], [5, [{ kind: 'function', name: 'x', parameters: { type: 'object' }, strict: true, cache: {} }], [{ type: 'text', text: 'hi', cache: { ttl: '1h' } }], { 'anthropic-messages': { service_tier: 'auto' } }]);

  t.strictSame(one([
    { type: 'document', title: 'a.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
    { type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } },
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
    { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'inner' }] } },
    { type: 'image', source: { type: 'file', file_id: 'file_01' } },
  ]), [
    { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' }, filename: 'a.pdf' },
    { type: 'file', source: { kind: 'url', url: 'https://x/a.pdf' } },
    { type: 'text', text: 'plain words' },
    { type: 'text', text: 'inner' },
    { type: 'image', source: { kind: 'file', format: 'anthropic-messages', id: 'file_01' } },
  ]);
  t.strictSame(one([{ type: 'tool_result', tool_use_id: 't1', is_error: true, cache_control: { type: 'ephemeral' }, content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { type: 'url', url: 'https://x/i.png' } }] }]),
    [{ type: 'tool_result', callId: 't1', content: [{ type: 'text', text: 'boom' }, { type: 'image', source: { kind: 'url', url: 'https://x/i.png' } }], isError: true, cache: {} }]);
  const history = decode({ ...base, messages: [{ role: 'assistant', content: [
    { type: 'redacted_thinking', data: 'EmwK' }, { type: 'redacted_thinking', data: 'gw1:gemini:abc' }, { type: 'thinking', thinking: 't', signature: '' },
  ] }] }).messages[0].content;
  t.strictSame(history, [
    { type: 'reasoning', text: '', redacted: { format: 'anthropic-messages', value: 'EmwK' } },
    { type: 'reasoning', text: '', redacted: { format: 'gemini', value: 'abc' } },
    { type: 'reasoning', text: 't' },
  ], 'native and wrapped redacted thinking; an empty signature is none');
});

t.test('server tools and their blocks are refused with a clear 400, never dropped', async (t) => {
  for (const type of ['web_search_20250305', 'text_editor_20250728', 'bash_20250124', 'computer_20250124', 'code_execution_20250825']) {
    t.throws(() => decode({ ...base, messages: [], tools: [{ type, name: 'x' }] }), { status: 400, code: 'not_translatable', param: 'tools.0.type', message: new RegExp(type) }, type);
  }
  t.throws(() => one([{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }]), { status: 400, code: 'not_translatable', param: 'messages.0.content.0', message: /server tools/ });
  t.throws(() => one([{ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }]), { status: 400, code: 'not_translatable', param: 'messages.0.content.0' });
  t.throws(() => decode({ ...base, messages: [], mcp_servers: [{ type: 'url', url: 'https://mcp', name: 'm' }] }), { status: 400, code: 'not_translatable', param: 'mcp_servers' });
});

t.test('hostile bodies: each wrong shape is a 400 naming the field, never a crash', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...base }, 'messages'],
    [{ ...base, messages: 'hi' }, 'messages'],
    [{ ...base, messages: [null] }, 'messages.0'],
    [{ ...base, messages: [{ role: 'developer', content: 'x' }] }, 'messages.0.role'],
    [{ ...base, messages: [{ role: 'user', content: 5 }] }, 'messages.0.content'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }, 'messages.0.content.0.text'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: [] }] }] }, 'messages.0.content.0.input'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'ftp' } }] }] }, 'messages.0.content.0.source.type'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'tool_use', id: 'b', name: 'c' }] }] }] }, 'messages.0.content.0.content.0'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'magic' }] }] }, 'messages.0.content.0.type'],
    [{ ...base, messages: [], system: [{ type: 'image' }] }, 'system.0.type'],
    [{ ...base, messages: [], tools: [{ name: 1, input_schema: {} }] }, 'tools.0.name'],
    [{ ...base, messages: [], tools: [{ name: 'x' }] }, 'tools.0.input_schema'],
    [{ ...base, messages: [], tool_choice: { type: 'sometimes' } }, 'tool_choice.type'],
    [{ ...base, messages: [], thinking: { type: 'on' } }, 'thinking.type'],
    [{ ...base, messages: [], thinking: { type: 'enabled', budget_tokens: 'lots' } }, 'thinking.budget_tokens'],
    [{ ...base, max_tokens: '5', messages: [] }, 'max_tokens'],
    [{ ...base, messages: [], stop_sequences: [1] }, 'stop_sequences.0'],
    [{ ...base, messages: [], temperature: 'hot' }, 'temperature'],
    [{ ...base, messages: [], metadata: 'x' }, 'metadata'],
    [{ ...base, messages: [], output_config: { format: { type: 'regex' } } }, 'output_config.format.type'],
  ];
  for (const [body, param] of cases) {
    try {
      decode(body);
      t.fail(`${param}: accepted`);
    } catch (err) {
      t.ok(err instanceof GatewayError && err.status === 400 && err.param === param, `${param}: ${(err as Error).message}`);
    }
  }
});

t.test('answers: another format\'s signatures wrapped, malformed arguments as {}, what a Message cannot hold left out, ids', async (t) => {
  const usage = { input: 1, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 };
  const m = codec.encodeResponse({ id: '', model: 'x', stop: 'tool_use', usage, content: [
    { type: 'reasoning', text: '', redacted: { format: 'gemini', value: 'R' } },
    { type: 'reasoning', text: '', id: { format: 'openai-responses', value: 'rs_1' } },
    { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
    { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":' },
    { type: 'tool_call', id: 'c2', name: 'f', arguments: '[1,2]' },
  ] }, ctxFor(requests.text)) as Record<string, any>;
  t.strictSame(m.content, [
    { type: 'redacted_thinking', data: 'gw1:gemini:R' },
    { type: 'tool_use', id: 'c1', name: 'f', input: {} },
    { type: 'tool_use', id: 'c2', name: 'f', input: {} },
  ]);
  t.match(m.id, /^msg_[0-9a-f]{24}$/, 'no upstream id: a fresh one');
  t.equal((codec.encodeResponse({ id: 'chatcmpl-1.2', model: 'x', stop: 'end', usage, content: [] }, ctxFor(requests.text)) as any).id, 'msg_chatcmpl-12');
});

const finish: CanonEvent = { type: 'finish', stop: 'tool_use', usage: { input: 3, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 } };

t.test('§4.1: arguments that arrive whole or only at the end still travel as input_json_delta, input {} at the start', async (t) => {
  const out = encodeAll([
    { type: 'block_start', index: 0, block: { type: 'whole', block: { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":1}' } } },
    { type: 'block_start', index: 1, block: { type: 'whole', block: { type: 'image', source: { kind: 'url', url: 'https://x/i.png' } } } },
    { type: 'block_start', index: 2, block: { type: 'tool_call', id: 'c2', name: 'g' } },
    { type: 'block_start', index: 3, block: { type: 'whole', block: { type: 'reasoning', text: '', redacted: { format: 'anthropic-messages', value: 'RD' } } } },
    { type: 'block_end', index: 0 },
    { type: 'block_end', index: 1 },
    // Arguments only when the call is done, as some Responses backends send them.
    { type: 'delta', index: 2, arguments: '{"b":2}', signature: { format: 'gemini', value: 'dropped' } },
    { type: 'block_end', index: 2 },
    { type: 'block_end', index: 3 },
    { type: 'block_end', index: 9 },
    { type: 'delta', index: 9, text: 'nowhere' },
    finish,
    { type: 'delta', index: 2, arguments: 'late' },
  ], ctxFor(requests.text));
  t.strictSame(grammarProblems(out), []);
  const data = wireEvents(out).map((e) => e.data);
  t.match(data[0], { type: 'message_start', message: { id: /^msg_/, content: [] } }, 'message_start first even without a start event');
  t.strictSame(data.slice(1, -2), [
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'c1', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'c2', name: 'g', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"b":2}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'redacted_thinking', data: 'RD' } },
    { type: 'content_block_stop', index: 2 },
  ], 'the image has no place in a Message and takes no index');
});

t.test('§4.2: blocks that start together are written one after another, each delta under the open block\'s index', async (t) => {
  const out = encodeAll([
    { type: 'start', id: 'x', model: 'm' },
    { type: 'block_start', index: 0, block: { type: 'reasoning' } },
    { type: 'block_start', index: 1, block: { type: 'text' } },
    { type: 'block_start', index: 2, block: { type: 'tool_call', id: 'c', name: 'f' } },
    { type: 'delta', index: 2, arguments: '{"q":' },
    { type: 'delta', index: 1, text: 'B' },
    { type: 'delta', index: 0, text: 'A' },
    { type: 'block_end', index: 1 },
    { type: 'delta', index: 2, arguments: '1}' },
    { type: 'block_end', index: 0 },
    { type: 'usage', usage: { input: 7, output: 4 } },
    { type: 'finish', stop: 'tool_use' },
  ], ctxFor(requests.text));
  t.strictSame(grammarProblems(out), []);
  const data = wireEvents(out).map((e) => e.data);
  t.strictSame(data.filter((d) => d.type === 'content_block_delta').map((d) => [d.index, d.delta.thinking ?? d.delta.text ?? d.delta.partial_json]),
    [[0, 'A'], [1, 'B'], [2, '{"q":'], [2, '1}']]);
  t.match(data.at(-2), { type: 'message_delta', usage: { input_tokens: 7, output_tokens: 4 } }, 'usage events feed message_delta when finish brings none');
});

t.test('§4.11: stream state is per request: two interleaved encoders write what each writes alone', async (t) => {
  const a = streams.parallelToolCalls.events;
  const b = streams.reasoning.events;
  const alone = [encodeAll(a, ctxFor(requests.text)), encodeAll(b, ctxFor(requests.text))];
  const ea = codec.encodeStream(ctxFor(requests.text));
  const eb = codec.encodeStream(ctxFor(requests.text));
  const out = ['', ''];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) out[0] += ea.event(a[i]);
    if (b[i]) out[1] += eb.event(b[i]);
  }
  t.strictSame(out, alone);
  t.strictSame(collectEvents(b).content, streams.reasoning.response.content, 'the fixture itself is untouched');
});

t.test('text and thinking that arrive whole are written as a block with its deltas, and fold back into the same blocks', async (t) => {
  const whole = [
    { type: 'reasoning', text: 'Because.', signature: { format: 'anthropic-messages', value: 'sig' } },
    { type: 'text', text: 'Done.' },
  ] as const;
  const events: CanonEvent[] = [
    { type: 'start', id: 'msg_w', model: 'm' },
    ...whole.map((block, index): CanonEvent => ({ type: 'block_start', index, block: { type: 'whole', block } })),
    { type: 'finish', stop: 'end', usage: { input: 1, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 } },
  ];
  const out = encodeAll(events, ctxFor(requests.text));
  t.strictSame(grammarProblems(out), []);
  t.strictSame(wireEvents(out).filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta), [
    { type: 'thinking_delta', thinking: 'Because.' }, { type: 'signature_delta', signature: 'sig' }, { type: 'text_delta', text: 'Done.' },
  ]);
  t.strictSame(collectEvents(decodeAll(out, ctxFor(requests.text))).content, whole);
});

t.test('a system message inside messages (Claude Code 2.x puts its environment notes there) is an instruction in place', async (t) => {
  const r = decode({ ...base, messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'text', text: '# Environment' }] }] });
  t.strictSame(r.messages[1], { role: 'system', content: [{ type: 'text', text: '# Environment' }] });
  const err = (() => { try { decode({ ...base, messages: [{ role: 'system', content: [{ type: 'image', source: {} }] }] }); } catch (e) { return e; } })();
  t.ok(err instanceof GatewayError && err.param === 'messages.0.content.0.type', 'only text in it');
  const bad = (() => { try { decode({ ...base, messages: [{ role: 'tool', content: 'x' }] }); } catch (e) { return e; } })();
  t.ok(bad instanceof GatewayError && bad.param === 'messages.0.role');
});

t.test('a system message\'s output_config.effort is this answer\'s effort; clear_at next_user_message hides it once a user message follows', async (t) => {
  const hi = { role: 'user', content: 'hi' };
  const r = decode({ ...base, output_config: { effort: 'low' }, thinking: { type: 'adaptive', display: 'omitted' }, messages: [
    hi, { role: 'system', content: 'Be brief.', output_config: { effort: 'max' } }, { role: 'system', output_config: { effort: 'high' } }, { role: 'system', content: 'Now.', output_config: {} },
  ] });
  t.strictSame(r.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'system', content: [{ type: 'text', text: 'Now.' }] }],
    'a message with only an effort adds no instruction');
  t.strictSame(r.reasoning, { enabled: true, effort: 'high', show: false }, 'the last effort set wins over the request-wide low');
  t.strictSame(decode({ ...base, messages: [hi, { role: 'system', content: 'x', output_config: { effort: null } }] }).reasoning, undefined, 'a null effort sets none');

  const cleared = { role: 'system', content: 'Only for this turn.', clear_at: 'next_user_message', output_config: { effort: 'max' } };
  t.strictSame(decode({ ...base, messages: [hi, cleared] }).messages.map((m) => m.role), ['user', 'system'], 'shown for the turn it follows');
  const later = decode({ ...base, messages: [hi, cleared, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'next' }] });
  t.strictSame([later.messages.map((m) => m.role), later.reasoning], [['user', 'assistant', 'user'], undefined], 'gone with its effort once a user message follows');
  t.strictSame(decode({ ...base, messages: [hi, { ...cleared, clear_at: 'never' }, { role: 'user', content: 'next' }] }).messages.map((m) => m.role), ['user', 'system', 'user'], 'never: kept');

  const param = (message: unknown) => { try { decode({ ...base, messages: [hi, message] }); } catch (e) { return e instanceof GatewayError ? [e.code, e.param] : e; } };
  t.strictSame(param({ role: 'system' }), ['invalid_body', 'messages.1'], 'neither content nor a setting');
  t.strictSame(param({ role: 'system', output_config: { effort: null } }), ['invalid_body', 'messages.1']);
  t.strictSame(param({ role: 'system', content: 'x', output_config: { effort: 'minimal' } }), ['invalid_body', 'messages.1.output_config.effort'], 'only the five efforts the API takes here');
  t.strictSame(param({ role: 'system', content: 'x', output_config: 'high' }), ['invalid_body', 'messages.1.output_config']);
  t.strictSame(param({ role: 'system', content: 'x', clear_at: 'soon' }), ['invalid_body', 'messages.1.clear_at']);
  t.strictSame(param({ role: 'user', content: 'x', clear_at: 'never' }), ['invalid_body', 'messages.1.clear_at'], 'clear_at is a system message\'s only');
  t.strictSame(param({ role: 'assistant', content: 'x', output_config: { effort: 'low' } }), ['invalid_body', 'messages.1.output_config']);
  t.strictSame(param({ role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'Bash' } }] }), ['not_translatable', 'messages.1.content.0.type'], 'tool changes have no translation');
});
