// The simulator's Anthropic Messages refuses what Anthropic refuses, with its status, error envelope and message.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { sign } from '../../simulator/signatures.ts';
import { anthropicRules } from '../../simulator/strict/anthropic.ts';
import { postJson, type RefusalCase, ruleStarting, testRefusals } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const HEADERS = { 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' };
const rule = (start: string) => ruleStarting(anthropicRules, start);
const error = (message: string) => ({ type: 'error', error: { type: 'invalid_request_error', message } });
const ask = { role: 'user', content: 'Weather in Paris?' };
const base = { model: 'claude-sonnet-4-5', max_tokens: 2048, messages: [ask] };
const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { input: { type: 'string' } } } }];
const use = (id: string) => ({ type: 'tool_use', id, name: 'get_weather', input: { input: 'Paris' } });
const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: '21' });
const thinking = { type: 'enabled', budget_tokens: 1024 };
const TAGS = "'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result', 'server_tool_use', "
  + "'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result', "
  + "'text_editor_code_execution_tool_result', 'tool_search_tool_result', 'container_upload'";
const THINKING_FIRST = 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final '
  + '`assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include '
  + 'thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at '
  + 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

const cases: RefusalCase[] = [
  { rule: rule('fields the endpoint'), body: { ...base, stream: true, stream_options: { include_usage: true } }, error: error('stream_options: Extra inputs are not permitted') },
  { rule: rule('fields the endpoint'), body: { ...base, input: 'hi' }, error: error('input: Extra inputs are not permitted') },
  { rule: rule('fields the endpoint'), path: '/v1/messages/count_tokens', body: base, error: error('max_tokens: Extra inputs are not permitted') },
  { rule: rule('a missing model'), body: { max_tokens: 10, messages: [ask] }, error: error('model: Field required') },
  { rule: rule('missing messages'), body: { model: base.model, max_tokens: 10 }, error: error('messages: Field required') },
  { rule: rule('messages that are not'), body: { ...base, messages: 'hi' }, error: error('messages: Input should be a valid list') },
  { rule: rule('a create without max_tokens'), body: { model: base.model, messages: [ask] }, error: error('max_tokens: Field required') },
  { rule: rule('a create without max_tokens'), body: { ...base, max_tokens: 0 }, error: error('max_tokens: Input should be greater than or equal to 1') },
  { rule: rule('temperature'), body: { ...base, temperature: 1.5 }, error: error('temperature: Input should be less than or equal to 1') },
  { rule: rule('custom tools'), body: { ...base, tools: [{ name: 'get_weather', input_schema: { properties: {} } }] }, error: error('tools.0.custom.input_schema.type: Field required') },
  { rule: rule('custom tools'), body: { ...base, tools: [{ name: 'get_weather', parameters: { type: 'object' } }] }, error: error('tools.0.custom.parameters: Extra inputs are not permitted') },
  {
    rule: rule('custom tools'),
    body: { ...base, tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] },
    error: error("tools.0: Input tag 'function' found using 'type' does not match any of the expected tags: 'custom', or a versioned tool type such as 'web_search_20250305'"),
  },
  { rule: rule('a thinking budget'), body: { ...base, thinking: { type: 'enabled', budget_tokens: 512 } }, error: error('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024') },
  {
    rule: rule('a thinking budget'),
    body: { ...base, max_tokens: 1024, thinking },
    error: error('`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size'),
  },
  { rule: rule('a tool choice that forces'), body: { ...base, tools, thinking, tool_choice: { type: 'any' } }, error: error('Thinking may not be enabled when tool_choice forces tool use.') },
  { rule: rule('roles other than'), body: { ...base, messages: [ask, { role: 'developer', content: 'Be brief.' }] }, error: error("messages.1.role: Input should be 'user', 'assistant' or 'system'") },
  { rule: rule('message fields'), body: { ...base, messages: [{ ...ask, name: 'Bob' }] }, error: error('messages.0.name: Extra inputs are not permitted') },
  { rule: rule('message fields'), body: { ...base, messages: [{ ...ask, clear_at: 'never' }] }, error: error('messages.0.clear_at: Extra inputs are not permitted') },
  { rule: rule('message fields'), body: { ...base, messages: [ask, { role: 'system', name: 'ops', content: 'Be brief.' }] }, error: error('messages.1.name: Extra inputs are not permitted') },
  { rule: rule('message fields'), body: { ...base, messages: [ask, { role: 'system', output_config: {} }] }, error: error('messages.1: a system message must have `content` or `output_config` fields') },
  { rule: rule('message fields'), body: { ...base, messages: [ask, { role: 'system', clear_at: 'never' }] }, error: error('messages.1: a system message must have `content` or `output_config` fields') },
  { rule: rule("a system message's"), body: { ...base, messages: [ask, { role: 'system', content: 'Be brief.', clear_at: 'later' }] }, error: error("messages.1.clear_at: Input should be 'next_user_message' or 'never'") },
  { rule: rule("a system message's"), body: { ...base, messages: [ask, { role: 'system', output_config: { effort: 'minimal' } }] }, error: error("messages.1.output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'") },
  { rule: rule("a system message's"), body: { ...base, messages: [ask, { role: 'system', content: 'JSON.', output_config: { format: { type: 'json_schema' } } }] }, error: error('messages.1.output_config.format: Extra inputs are not permitted') },
  {
    rule: rule('block types'),
    body: { ...base, messages: [ask, { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] },
    error: error("messages.1.content.0: Input tag 'image' found using 'type' does not match any of the expected tags: 'text', 'tool_addition', 'tool_removal'"),
  },
  {
    rule: rule('block types'),
    body: { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] },
    error: error(`messages.0.content.1: Input tag 'image_url' found using 'type' does not match any of the expected tags: ${TAGS}`),
  },
  {
    rule: rule('block types'),
    body: { ...base, tools, messages: [ask, { role: 'assistant', content: [{ ...use('toolu_1'), text: '' }] }, { role: 'user', content: [result('toolu_1')] }] },
    error: error('messages.1.content.0.tool_use.text: Extra inputs are not permitted'),
  },
  {
    rule: rule('empty content'),
    body: { ...base, messages: [ask, { role: 'assistant', content: '' }, { role: 'user', content: 'Again?' }] },
    error: error('messages.1: all messages must have non-empty content except for the optional final assistant message'),
  },
  { rule: rule('empty content'), body: { ...base, messages: [ask, { role: 'system', content: [] }] }, error: error('messages.1: all messages must have non-empty content except for the optional final assistant message') },
  {
    rule: rule('tool ids'),
    body: { ...base, tools, messages: [ask, { role: 'assistant', content: [use('call:1')] }, { role: 'user', content: [result('call:1')] }] },
    error: error("messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"),
  },
  {
    rule: rule('tool_result blocks'),
    body: { ...base, tools, messages: [ask, { role: 'assistant', content: [use('toolu_1')] }, { role: 'user', content: [result('toolu_9')] }] },
    error: error('messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.'),
  },
  {
    rule: rule('tool_result blocks'),
    body: { ...base, tools, messages: [ask, { role: 'assistant', content: [use('toolu_1'), use('toolu_2')] }, { role: 'user', content: [result('toolu_1')] }] },
    error: error('messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` block in the next message.'),
  },
  {
    rule: rule('tool_result blocks'),
    body: { ...base, tools, messages: [ask, { role: 'assistant', content: [use('toolu_1')] }, { role: 'user', content: [{ type: 'text', text: 'Here:' }, result('toolu_1')] }] },
    error: error('messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.'),
  },
  {
    rule: rule('thinking blocks whose signature'),
    body: { ...base, tools, thinking, messages: [ask, { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.', signature: sign('gemini', 'Hmm.') }, use('toolu_1')] }, { role: 'user', content: [result('toolu_1')] }] },
    error: error('messages.1.content.0: Invalid `signature` in `thinking` block'),
  },
  {
    rule: rule('thinking blocks whose signature'),
    body: { ...base, tools, thinking, messages: [ask, { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm, edited.', signature: sign('anthropic', 'Hmm.') }, use('toolu_1')] }, { role: 'user', content: [result('toolu_1')] }] },
    error: error('messages.1.content.0: Invalid `signature` in `thinking` block'),
  },
  {
    rule: rule('with thinking on'),
    body: { ...base, tools, thinking, messages: [ask, { role: 'assistant', content: [use('toolu_1')] }, { role: 'user', content: [result('toolu_1')] }] },
    error: error(THINKING_FIRST),
  },
];

testRefusals(t, sim, { path: '/v1/messages', headers: HEADERS, rules: anthropicRules, cases });

t.test('what the real API accepts still passes: an assistant first, same-role turns merged, results then text, a final empty assistant', async (t) => {
  const messages = [
    { role: 'assistant', content: 'Hello, how can I help?' },
    ask,
    { role: 'user', content: [{ type: 'text', text: 'Use the tool.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
    { role: 'assistant', content: [use('toolu_1'), use('toolu_2')] },
    { role: 'user', content: [result('toolu_2')] },
    { role: 'user', content: [result('toolu_1'), { type: 'text', text: 'Both done.' }] },
    { role: 'assistant', content: '' },
  ];
  const res = await postJson(sim, '/v1/messages', { ...base, tools, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], messages }, HEADERS);
  t.equal(res.status, 200);
  const count = await postJson(sim, '/v1/messages/count_tokens', { model: base.model, tools, messages, thinking: { type: 'adaptive' } }, HEADERS);
  t.equal(count.status, 200, 'count_tokens takes the same messages without max_tokens');
});

t.test('system messages the beta API accepts: text with cache_control and an effort, only an effort, an empty output_config beside content, clear_at, tool changes; between a call and its result', async (t) => {
  const messages = [
    ask,
    { role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], output_config: { effort: 'medium' } },
    { role: 'assistant', content: [use('toolu_1')] },
    { role: 'system', output_config: { effort: 'high' }, clear_at: 'next_user_message' },
    { role: 'user', content: [result('toolu_1')] },
    { role: 'system', content: 'Answer now.', output_config: {}, clear_at: null },
    { role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'get_weather' } }], output_config: { effort: null } },
  ];
  const res = await postJson(sim, '/v1/messages', { ...base, tools, output_config: { effort: 'medium' }, messages }, HEADERS);
  t.equal(res.status, 200, 'accepted');
  const answer = await res.json();
  t.same(answer.content.map((b: { type: string }) => b.type), ['text'], 'the trailing system messages do not hide the tool result: the answer is text');
  const count = await postJson(sim, '/v1/messages/count_tokens', { model: base.model, tools, messages }, HEADERS);
  t.equal(count.status, 200, 'count_tokens takes them too');
});
