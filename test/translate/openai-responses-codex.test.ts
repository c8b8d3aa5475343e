// Codex CLI through the Responses codec: its recorded request (test/fixtures/clients/codex-cli-*.json) decodes without
// losing tools, system, turns or reasoning settings; its stateless next turns (encrypted reasoning, function and freeform
// apply_patch calls) survive; and what it streams back keeps Codex's own grammar (translation.md §4.7).
import t from 'tap';
import type { CanonRequest } from '../../core/canonical.ts';
import { clientFixture, rawClientFixture } from '../helpers/client-fixtures.ts';
import { codec, ctxFor, decodeAll, decodeCtx, encodeAll, eventsOf, FORMAT, upstreamStream } from './openai-responses-helpers.ts';

const recorded = clientFixture('codex-cli');

// The recorder cut long lists to two items and marked the cut (clientFixture takes the marks out); the two input items
// it cut after Codex's developer messages are user messages (the environment context and the prompt), put back here as
// Codex sends them.
const ENVIRONMENT = { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/home/user</cwd>\n</environment_context>' }] };
const PROMPT = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files here.' }] };
const APPLY_PATCH = {
  type: 'custom', name: 'apply_patch', description: 'Use the `apply_patch` tool to edit files.',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\n' },
};
const body = (): Record<string, any> => {
  const b = structuredClone(recorded.body) as Record<string, any>;
  b.input = [...b.input, ENVIRONMENT, PROMPT];
  b.tools = [...b.tools, APPLY_PATCH];
  return b;
};

t.test('the recorded Codex request decodes with everything that matters', async (t) => {
  const sent = body();
  const req = codec.decodeRequest(sent, 'generate', { ...decodeCtx, path: recorded.url });
  t.equal(req.stream, true);
  t.strictSame(req.system.map((b) => b.text), [sent.input[0].content[0].text, sent.input[1].content[0].text, sent.input[1].content[1].text],
    'its leading developer messages are the system prompt, each part kept');
  t.strictSame(req.messages, [{ role: 'user', content: [{ type: 'text', text: ENVIRONMENT.content[0].text }, { type: 'text', text: PROMPT.content[0].text }] }]);
  t.strictSame(req.tools.map((tool) => [tool.kind, tool.name]), [['function', 'exec_command'], ['function', 'write_stdin'], ['custom', 'apply_patch']]);
  t.strictSame(req.tools[0], { kind: 'function', name: 'exec_command', description: sent.tools[0].description, parameters: sent.tools[0].parameters, strict: false });
  t.strictSame(req.tools[2], { kind: 'custom', name: 'apply_patch', description: APPLY_PATCH.description, format: APPLY_PATCH.format }, 'the freeform tool and its grammar');
  t.strictSame(req.toolChoice, { type: 'auto' });
  t.equal(req.parallelToolCalls, true);
  t.strictSame(req.reasoning, { enabled: true, show: true }, 'summary auto: reasoning on and shown');
  t.match(req.extras[FORMAT], { store: false, include: ['reasoning.encrypted_content'], prompt_cache_key: sent.prompt_cache_key, client_metadata: sent.client_metadata });
});

t.test('the recorded Codex request, as it was recorded, is refused for its cut-list marker, not misread', async (t) => {
  let error: any;
  const raw = rawClientFixture('codex-cli');
  try { codec.decodeRequest(raw.body, 'generate', decodeCtx); } catch (err) { error = err; }
  t.match(error, { status: 400, param: 'input[2]' }, 'a string where an item must be');
});

t.test('the decoded Codex request is complete enough for any upstream: re-encoded for OpenAI it loses nothing', async (t) => {
  const req = codec.decodeRequest(body(), 'generate', decodeCtx);
  const out = codec.encodeRequest(req, ctxFor(req)).body as Record<string, any>;
  t.equal(out.instructions, req.system.map((b) => b.text).join('\n\n'));
  t.strictSame(out.tools.map((tool: any) => [tool.type, tool.name, tool.strict]), [['function', 'exec_command', false], ['function', 'write_stdin', false], ['custom', 'apply_patch', undefined]]);
  t.strictSame(out.tools[2].format, APPLY_PATCH.format);
  t.strictSame(out.reasoning, { summary: 'auto' });
  t.match(out, { tool_choice: 'auto', parallel_tool_calls: true, stream: true, store: false, include: ['reasoning.encrypted_content'] });
  t.notOk('prompt_cache_key' in out || 'client_metadata' in out, 'the client\'s own extras never go upstream');
});

/** Codex's next turn after an Anthropic-served answer: the reasoning it got back (wrapped), a call, a patch, outputs. */
function nextTurn(): Record<string, any> {
  const b = body();
  b.input.push(
    { type: 'reasoning', id: 'rs_test_0', summary: [{ type: 'summary_text', text: 'Listing files.' }], encrypted_content: 'gw1:anthropic-messages:sig-abc' },
    { type: 'function_call', id: 'fc_test_1', call_id: 'toolu_01', name: 'exec_command', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'toolu_01', output: 'README.md\n' },
    { type: 'custom_tool_call', id: 'ctc_test_0', call_id: 'toolu_02', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n' },
    { type: 'custom_tool_call_output', call_id: 'toolu_02', output: 'Done!' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
  );
  return b;
}

t.test('a stateless next turn: reasoning with its signature, function and freeform calls, their outputs (§4.7)', async (t) => {
  const req = codec.decodeRequest(nextTurn(), 'generate', decodeCtx);
  t.strictSame(req.messages.slice(1), [
    {
      role: 'assistant', content: [
        { type: 'reasoning', text: 'Listing files.', signature: { format: 'anthropic-messages', value: 'sig-abc' }, id: { format: FORMAT, value: 'rs_test_0' } },
        { type: 'tool_call', id: 'toolu_01', name: 'exec_command', arguments: '{"cmd":"ls"}' },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_01', content: [{ type: 'text', text: 'README.md\n' }] }] },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_02', name: 'apply_patch', arguments: '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n', custom: true }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'toolu_02', content: [{ type: 'text', text: 'Done!' }] }, { type: 'text', text: 'Thanks' }] },
  ], 'Anthropic\'s signature comes home under its own name; each output follows its call');
});

t.test('the next turn re-encoded for OpenAI: foreign reasoning dropped, the patch call and its output stay freeform', async (t) => {
  const req = codec.decodeRequest(nextTurn(), 'generate', decodeCtx);
  const input = (codec.encodeRequest(req, ctxFor(req)).body as any).input.slice(1); // after the user turn
  t.strictSame(input, [
    { type: 'function_call', call_id: 'toolu_01', name: 'exec_command', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'toolu_01', output: 'README.md\n' },
    { type: 'custom_tool_call', call_id: 'toolu_02', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n' },
    { type: 'custom_tool_call_output', call_id: 'toolu_02', output: 'Done!' },
    { role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
  ], 'Anthropic\'s signature never reaches OpenAI');
});

t.test('what Codex gets back: a freeform call streamed as custom_tool_call input, with every zero value', async (t) => {
  const req = codec.decodeRequest(body(), 'generate', decodeCtx);
  const ctx = ctxFor(req, req.extras[FORMAT]);
  const sent = eventsOf(encodeAll([
    { type: 'start', id: 'up', model: 'claude' },
    { type: 'block_start', index: 0, block: { type: 'reasoning' } },
    { type: 'delta', index: 0, text: 'Patch it.' },
    { type: 'delta', index: 0, signature: { format: 'anthropic-messages', value: 'sig-xyz' } },
    { type: 'block_end', index: 0 },
    { type: 'block_start', index: 1, block: { type: 'tool_call', id: 'toolu_03', name: 'apply_patch', custom: true } },
    { type: 'delta', index: 1, arguments: '*** Begin Patch\n' },
    { type: 'delta', index: 1, arguments: '*** End Patch\n' },
    { type: 'block_end', index: 1 },
    { type: 'finish', stop: 'tool_use', usage: { input: 100, cacheRead: 80, cacheWrite: 0, output: 20, reasoning: 5 } },
  ], ctx));
  const call = sent.filter((e) => e.output_index === 1);
  t.strictSame(call.map((e) => e.type), ['response.output_item.added', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done', 'response.output_item.done']);
  t.strictSame(call[0].item, { id: 'ctc_test_1', type: 'custom_tool_call', status: 'in_progress', call_id: 'toolu_03', name: 'apply_patch', input: '' });
  t.strictSame(call[4].item, { id: 'ctc_test_1', type: 'custom_tool_call', status: 'completed', call_id: 'toolu_03', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' });
  const reasoning = sent.find((e) => e.type === 'response.output_item.done' && e.output_index === 0)!;
  t.equal(reasoning.item.encrypted_content, 'gw1:anthropic-messages:sig-xyz', 'Codex asked include: the signature rides along to come back next turn');
  const completed = sent.at(-1)!;
  t.match(completed.response, { status: 'completed', store: false, tools: req.extras[FORMAT].tools, usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 80 }, output_tokens: 20 } });
});

t.test('an OpenAI upstream streaming a freeform call decodes into a custom call (names restored)', async (t) => {
  const req: CanonRequest = codec.decodeRequest(body(), 'generate', decodeCtx);
  const events = decodeAll(upstreamStream([
    ['response.created', { response: { id: 'resp_up', model: 'gpt-5', status: 'in_progress' } }],
    ['response.output_item.added', { output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'in_progress', call_id: 'call_7', name: 'apply_patch', input: '' } }],
    ['response.custom_tool_call_input.delta', { item_id: 'ctc_1', output_index: 0, delta: '*** Begin' }],
    ['response.custom_tool_call_input.delta', { item_id: 'ctc_1', output_index: 0, delta: ' Patch\n' }],
    ['response.custom_tool_call_input.done', { item_id: 'ctc_1', output_index: 0, input: '*** Begin Patch\n' }],
    ['response.output_item.done', { output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_7', name: 'apply_patch', input: '*** Begin Patch\n' } }],
    ['response.completed', { response: { id: 'resp_up', model: 'gpt-5', status: 'completed', usage: { input_tokens: 9, output_tokens: 4 } } }],
  ]), ctxFor(req));
  t.strictSame(events.filter((e) => e.type !== 'start'), [
    { type: 'block_start', index: 0, block: { type: 'tool_call', id: 'call_7', name: 'apply_patch', custom: true } },
    { type: 'delta', index: 0, arguments: '*** Begin' },
    { type: 'delta', index: 0, arguments: ' Patch\n' },
    { type: 'block_end', index: 0 },
    { type: 'finish', stop: 'tool_use', usage: { input: 9, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 } },
  ]);
});
