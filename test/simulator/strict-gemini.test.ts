// The simulator's Gemini API refuses what Google refuses, with Google's status, envelope, message and field violations.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { seal, unseal } from '../../simulator/signatures.ts';
import { callToken, geminiRules, SKIP_SIGNATURE } from '../../simulator/strict/gemini.ts';
import { postJson, type RefusalCase, ruleStarting, testRefusals } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const PATH = '/v1beta/models/gemini-2.5-flash:generateContent';
const rule = (start: string) => ruleStarting(geminiRules, start);
const error = (message: string, details?: unknown[]) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT', ...(details ? { details } : {}) } });
const violations = (...list: Array<{ field?: string; description: string }>) => [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: list }];
/** A parse error: its description is also the message, and the violation names the parent's proto path. */
const unknown = (description: string, field?: string) => error(description, violations({ ...(field ? { field } : {}), description }));
const ask = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
const call = { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] };
const declare = (parameters: object) => [{ functionDeclarations: [{ name: 'get_weather', parameters }] }];
const result = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { t: 21 } } }] };
const GEMINI_3 = '/v1beta/models/gemini-3-pro-preview:generateContent';

const cases: RefusalCase[] = [
  { rule: rule('fields the protos'), body: { contents: [ask], metadata: { user_id: 'u' } }, error: unknown('Invalid JSON payload received. Unknown name "metadata": Cannot find field.') },
  {
    rule: rule('fields the protos'),
    body: { contents: [ask], tools: declare({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', additionalProperties: false }) },
    error: error(
      'Invalid JSON payload received. Unknown name "$schema" at \'tools[0].function_declarations[0].parameters\': Cannot find field.\n'
        + 'Invalid JSON payload received. Unknown name "additionalProperties" at \'tools[0].function_declarations[0].parameters\': Cannot find field.',
      violations(
        { field: 'tools[0].function_declarations[0].parameters', description: 'Invalid JSON payload received. Unknown name "$schema" at \'tools[0].function_declarations[0].parameters\': Cannot find field.' },
        { field: 'tools[0].function_declarations[0].parameters', description: 'Invalid JSON payload received. Unknown name "additionalProperties" at \'tools[0].function_declarations[0].parameters\': Cannot find field.' },
      ),
    ),
  },
  ...['exclusiveMinimum', 'propertyNames', 'uniqueItems', '$ref'].map((name): RefusalCase => ({
    rule: rule('fields the protos'),
    body: { contents: [ask], tools: declare({ type: 'object', properties: { n: { type: 'number', [name]: name === '$ref' ? '#/$defs/n' : 1 } } }) },
    error: unknown(`Invalid JSON payload received. Unknown name "${name}" at 'tools[0].function_declarations[0].parameters.properties[0].value': Cannot find field.`, 'tools[0].function_declarations[0].parameters.properties[0].value'),
  })),
  {
    rule: rule('fields the protos'),
    body: { contents: [ask], tools: declare({ type: 'object', properties: { n: { type: ['string', 'null'] } } }) },
    error: unknown('Invalid JSON payload received. Unknown name "type" at \'tools[0].function_declarations[0].parameters.properties[0].value\': Proto field is not repeating, cannot start list.', 'tools[0].function_declarations[0].parameters.properties[0].value'),
  },
  {
    rule: rule('fields the protos'),
    body: { contents: [ask, call, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: '21 degrees' } }] }] },
    error: unknown('Invalid value at \'contents[2].parts[0].function_response.response\' (type.googleapis.com/google.protobuf.Struct), "21 degrees"', 'contents[2].parts[0].function_response.response'),
  },
  {
    rule: rule('fields the protos'),
    body: { contents: [ask, call, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: [21] } }] }] },
    error: unknown('Invalid JSON payload received. Unknown name "response" at \'contents[2].parts[0].function_response\': Proto field is not repeating, cannot start list.', 'contents[2].parts[0].function_response'),
  },
  { rule: rule('missing contents'), body: { contents: [] }, error: error('* GenerateContentRequest.contents: contents is not specified\n') },
  { rule: rule('roles other than'), body: { contents: [{ role: 'assistant', parts: [{ text: 'Hi' }] }, ask] }, error: error('Please use a valid role: user, model.') },
  { rule: rule('roles other than'), body: { contents: [ask, call, { role: 'function', parts: [{ functionResponse: { name: 'get_weather', response: { t: 21 } } }] }] }, error: error('Please use a valid role: user, model.') },
  { rule: rule('a content without parts'), body: { contents: [ask, { role: 'model', parts: [] }, ask] }, error: error('* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n') },
  {
    rule: rule('a part with two'),
    body: { contents: [{ role: 'user', parts: [{ text: 'What is this?', inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }] },
    error: error("Invalid value at 'contents[0].parts[0]' (oneof), oneof field 'data' is already set. Cannot set 'inlineData'"),
  },
  {
    rule: rule('a part with two'),
    body: { contents: [ask, { role: 'model', parts: [{ text: '' }] }, ask] },
    error: error("* GenerateContentRequest.contents[1].parts[0].data: required oneof field 'data' must have one initialized field\n"),
  },
  {
    rule: rule('a part with two'),
    body: { contents: [{ role: 'user', parts: [{ thought: true }] }] },
    error: error("* GenerateContentRequest.contents[0].parts[0].data: required oneof field 'data' must have one initialized field\n"),
  },
  {
    rule: rule('a thoughtSignature'),
    body: { contents: [ask, { role: 'model', parts: [{ ...call.parts[0], thoughtSignature: seal('openai', 'elsewhere') }] }, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { t: 21 } } }] }] },
    error: error('Corrupted thought signature.'),
  },
  {
    rule: rule('a thoughtSignature'),
    body: { contents: [ask, { role: 'model', parts: [{ ...call.parts[0], thoughtSignature: 'not base64!' }] }, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { t: 21 } } }] }] },
    error: error('Invalid value at \'contents[1].parts[0].thought_signature\' (TYPE_BYTES), Base64 decoding failed for "not base64!"'),
  },
  {
    // Minted for get_weather(Paris), replayed on get_weather(Rome).
    rule: rule('a thoughtSignature'),
    body: { contents: [ask, { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Rome' } }, thoughtSignature: seal('gemini', callToken(call.parts[0].functionCall)) }] }, result] },
    error: error('Corrupted thought signature.'),
  },
  {
    rule: rule('Gemini 3'),
    path: GEMINI_3,
    body: { contents: [ask, { role: 'model', parts: [{ text: 'Checking.' }, ...call.parts] }, result] },
    error: error('Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:get_weather` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.'),
  },
  {
    // The second step of the same turn (after a functionResponse) is checked too.
    rule: rule('Gemini 3'),
    path: GEMINI_3,
    body: { contents: [ask, { role: 'model', parts: [{ ...call.parts[0], thoughtSignature: SKIP_SIGNATURE }] }, result, call, result] },
    error: error('Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:get_weather` , position 1. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.'),
  },
];

t.test('Gemini 3: a step of an earlier turn, the placeholder and the signature minted for the call pass; the answer signs its first call', async (t) => {
  const earlier = { contents: [ask, call, result, { role: 'model', parts: [{ text: 'Sunny.' }] }, ask] };
  t.equal((await postJson(sim, GEMINI_3, earlier)).status, 200, 'an earlier turn is not checked');
  const placeholder = { contents: [ask, { role: 'model', parts: [{ ...call.parts[0], thoughtSignature: SKIP_SIGNATURE }] }, result] };
  t.equal((await postJson(sim, GEMINI_3, placeholder)).status, 200, 'the placeholder');
  const answer = await (await postJson(sim, GEMINI_3, { contents: [ask], tools: declare({ type: 'object', properties: { city: { type: 'string' } } }) })).json() as any;
  const part = answer.candidates[0].content.parts[0];
  t.equal(unseal('gemini', part.thoughtSignature), callToken(part.functionCall), 'minted for this call');
  const real = { contents: [ask, { role: 'model', parts: [part] }, result] };
  t.equal((await postJson(sim, GEMINI_3, real)).status, 200, 'its own signature back on its call');
  t.equal((await postJson(sim, PATH, { contents: [ask, call, result] })).status, 200, 'Gemini 2.5 checks nothing of the kind');
});

testRefusals(t, sim, { path: PATH, rules: geminiRules, cases });

t.test('the same rules hold for streamGenerateContent and countTokens, which answer with the Google envelope', async (t) => {
  const bad = { contents: [{ role: 'assistant', parts: [{ text: 'Hi' }] }] };
  for (const path of ['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', '/v1beta/models/gemini-2.5-flash:countTokens']) {
    const res = await postJson(sim, path, bad);
    t.equal(res.status, 400, path);
    t.same(await res.json(), error('Please use a valid role: user, model.'), path);
  }
  const wrapped = await postJson(sim, '/v1beta/models/gemini-2.5-flash:countTokens', { generateContentRequest: { model: 'models/gemini-2.5-flash', ...bad } });
  t.same(await wrapped.json(), error('Please use a valid role: user, model.'));
});

t.test('what the real API accepts still passes: snake_case, parametersJsonSchema with full JSON Schema, the skip placeholder, a roleless content', async (t) => {
  const body = {
    system_instruction: { role: 'user', parts: [{ text: 'Be brief.' }] },
    contents: [
      { parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ function_call: { name: 'get_weather', args: { city: 'Paris' } }, thought_signature: 'skip_thought_signature_validator' }] },
      { role: 'user', parts: [{ function_response: { name: 'get_weather', response: { temp_c: 21 } } }] },
    ],
    tools: [{ function_declarations: [{ name: 'get_weather', parametersJsonSchema: { $schema: 'x', type: 'object', additionalProperties: false, properties: { city: { type: ['string', 'null'] } } } }] }],
    generation_config: { max_output_tokens: 50, thinking_config: { include_thoughts: false } },
  };
  const res = await postJson(sim, PATH, body);
  t.equal(res.status, 200);
});
