// The simulator's Responses API refuses what OpenAI refuses, with OpenAI's status, envelope, message, param and code.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { seal } from '../../simulator/signatures.ts';
import { responsesRules } from '../../simulator/strict/openai-responses.ts';
import { postJson, type RefusalCase, ruleStarting, testRefusals } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const rule = (start: string) => ruleStarting(responsesRules, start);
const error = (message: string, param: string | null = null, code: string | null = null) => ({ error: { message, type: 'invalid_request_error', param, code } });
const user = { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] };
const fcall = { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' };
const output = { type: 'function_call_output', call_id: 'call_1', output: '21' };
const body = (input: unknown[], extra: object = {}) => ({ model: 'gpt-5', input, ...extra });
const PARTS = "'input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', and 'encrypted_content'";

const cases: RefusalCase[] = [
  { rule: rule('top-level fields'), body: body([user], { messages: [] }), error: error("Unknown parameter: 'messages'.", 'messages', 'unknown_parameter') },
  { rule: rule('top-level fields'), body: body([user], { max_tokens: 100 }), error: error("Unknown parameter: 'max_tokens'.", 'max_tokens', 'unknown_parameter') },
  { rule: rule('a missing model'), body: { input: 'hi' }, error: error("Missing required parameter: 'model'.", 'model', 'missing_required_parameter') },
  { rule: rule('input that is'), body: { model: 'gpt-5', input: 42 }, error: error("Invalid type for 'input': expected a string or an array of input items.", 'input', 'invalid_type') },
  { rule: rule('an output cap'), body: body([user], { max_output_tokens: 0 }), error: error("Invalid 'max_output_tokens': expected an integer of at least 1.", 'max_output_tokens', 'invalid_value') },
  {
    rule: rule('message roles'),
    body: body([user, fcall, { role: 'tool', content: '21' }]),
    error: error("Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", 'input[2].role', 'invalid_value'),
  },
  {
    rule: rule('content part types'),
    body: body([user, { type: 'message', role: 'assistant', content: [{ type: 'input_text', text: 'Earlier answer' }] }, user]),
    error: error("Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.", 'input[1].content[0]', 'invalid_value'),
  },
  {
    rule: rule('content part types'),
    body: body([{ role: 'user', content: [{ type: 'text', text: 'chat-style part' }] }]),
    error: error(`Invalid value: 'text'. Supported values are: ${PARTS}.`, 'input[0].content[0].type', 'invalid_value'),
  },
  {
    rule: rule('content part types'),
    body: body([{ role: 'user', content: [{ type: 'output_text', text: 'not the model' }] }]),
    error: error("Invalid value: 'output_text'. Supported values are: 'input_text', 'input_image', and 'input_file'.", 'input[0].content[0]', 'invalid_value'),
  },
  { rule: rule('a function_call_output that'), body: body([user, output]), error: error('No tool call found for function call output with call_id call_1.', 'input') },
  { rule: rule('a function_call with no'), body: body([user, fcall, user]), error: error('No tool output found for function call call_1.', 'input') },
  {
    rule: rule('reasoning encrypted_content'),
    body: body([user, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: seal('anthropic', 'someone else') }, fcall, output]),
    error: 'computed below',
  },
];
// A token sealed under another vendor's key is quoted by its ends, as OpenAI quotes encrypted content.
const foreign = (cases[cases.length - 1].body as { input: Array<{ encrypted_content?: string }> }).input[1].encrypted_content!;
cases[cases.length - 1].error = error(`The encrypted content ${foreign.slice(0, 4)}...${foreign.slice(-4)} could not be verified.`, null, 'invalid_encrypted_content');

testRefusals(t, sim, { path: '/v1/responses', rules: responsesRules, cases });

t.test('what the real API accepts still passes: developer items, outputs answering a chained call, reasoning items without encrypted_content', async (t) => {
  const first = await (await postJson(sim, '/v1/responses', body([user], { tools: [{ type: 'function', name: 'get_weather' }] }))).json();
  const callId = first.output[0].call_id;
  const chained = await postJson(sim, '/v1/responses', body([{ type: 'function_call_output', call_id: callId, output: '21' }], { previous_response_id: first.id }));
  t.equal(chained.status, 200, 'an output may answer a call of the previous response');
  const items = [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be brief.' }] },
    user,
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking.' }] },
    fcall,
    output,
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 21.', annotations: [] }] },
    { role: 'user', content: 'Thanks' },
  ];
  const res = await postJson(sim, '/v1/responses', body(items, { client_metadata: { session_id: 's' }, store: false }));
  t.equal(res.status, 200);
  t.equal((await postJson(sim, '/v1/responses/input_tokens', { input: items })).status, 200, 'input_tokens needs no model');
});
