// The simulator's Chat Completions refuses what OpenAI refuses, with OpenAI's status, envelope, message, param and code.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { chatRules } from '../../simulator/strict/openai-chat.ts';
import { postJson, type RefusalCase, ruleStarting, testRefusals } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };
const rule = (start: string) => ruleStarting(chatRules, start);
const error = (message: string, param: string | null = null, code: string | null = null) => ({ error: { message, type: 'invalid_request_error', param, code } });
const call = (id: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: '{}' } });
const ROLES = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'";

const cases: RefusalCase[] = [
  { rule: rule('top-level fields'), body: { ...base, thinking: { type: 'enabled' } }, error: error('Unrecognized request argument supplied: thinking') },
  { rule: rule('top-level fields'), body: { ...base, top_k: 5, max_output_tokens: 9 }, error: error('Unrecognized request arguments supplied: top_k, max_output_tokens') },
  { rule: rule('a missing model'), body: { messages: base.messages }, error: error('you must provide a model parameter', 'model') },
  { rule: rule('missing messages'), body: { model: 'gpt-4o-mini' }, error: error("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter') },
  { rule: rule('messages that are not'), body: { ...base, messages: [] }, error: error("Invalid 'messages': expected a non-empty array of message objects.", 'messages', 'invalid_type') },
  { rule: rule('an output cap'), body: { ...base, max_completion_tokens: 0 }, error: error("Invalid 'max_completion_tokens': expected an integer of at least 1.", 'max_completion_tokens', 'invalid_value') },
  { rule: rule('stream_options'), body: { ...base, stream_options: { include_usage: true } }, error: error("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value') },
  { rule: rule('roles'), body: { ...base, messages: [{ role: 'model', content: 'Hi' }] }, error: error(`Invalid value: 'model'. Supported values are: ${ROLES}.`, 'messages[0].role', 'invalid_value') },
  { rule: rule('message fields'), body: { ...base, messages: [{ role: 'user', content: 'Hi', tool_call_id: 'call_1' }] }, error: error("Additional properties are not allowed ('tool_call_id' was unexpected) - 'messages.0'") },
  {
    rule: rule('content part types'),
    body: { ...base, messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }, ...base.messages] },
    error: error("Invalid value: 'image_url'. Supported values are: 'text'.", 'messages[0].content[0].type', 'invalid_value'),
  },
  {
    rule: rule('content part types'),
    body: { ...base, messages: [...base.messages, { role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'x' } }] }, { role: 'user', content: 'Again' }] },
    error: error("Invalid value: 'image_url'. Supported values are: 'text' and 'refusal'.", 'messages[1].content[0].type', 'invalid_value'),
  },
  {
    rule: rule('content part types'),
    body: { ...base, messages: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] },
    error: error("Invalid value: 'input_text'. Supported values are: 'text', 'image_url', 'input_audio', and 'file'.", 'messages[0].content[0].type', 'invalid_value'),
  },
  {
    rule: rule('tool messages'),
    body: { ...base, messages: [...base.messages, { role: 'tool', tool_call_id: 'call_1', content: '21' }] },
    error: error("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", 'messages.[1].role'),
  },
  {
    rule: rule('tool messages'),
    body: { ...base, messages: [...base.messages, { role: 'assistant', content: null, tool_calls: [call('call_1')] }, { role: 'tool', tool_call_id: 'call_9', content: '21' }] },
    error: error("Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of previous message.", 'messages.[2].tool_call_id'),
  },
  {
    rule: rule('tool messages'),
    body: {
      ...base,
      messages: [...base.messages, { role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] }, { role: 'tool', tool_call_id: 'call_1', content: '21' }, { role: 'user', content: 'And?' }],
    },
    error: error("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2", 'messages.[1].role'),
  },
];

testRefusals(t, sim, { path: '/v1/chat/completions', rules: chatRules, cases });

t.test('what the real API accepts still passes: tool results in any order, developer and system anywhere, null content beside tool_calls', async (t) => {
  const messages = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Weather?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
    { role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] },
    { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '22' }] },
    { role: 'tool', tool_call_id: 'call_1', content: '21' },
    { role: 'system', content: 'Mid-conversation system message.' },
  ];
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } });
  t.equal(res.status, 200);
  await res.text();
});
