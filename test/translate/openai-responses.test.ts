// The openai-responses codec, requests: every canonical fixture request encoded for an OpenAI upstream (exact bodies for
// the main cases), and a Responses client's equivalent body decoded back into the fixture.
import t from 'tap';
import type { CanonRequest } from '../../core/canonical.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { codec, ctxFor, decodeCtx, FORMAT, thrown } from './openai-responses-helpers.ts';

const encode = (req: CanonRequest) => codec.encodeRequest(req, ctxFor(req));
const SCHEMA = (requests.structured.output as { schema: Record<string, unknown> }).schema;
const user = (text: string) => ({ role: 'user', content: [{ type: 'input_text', text }] });
const WEATHER_TOOL = { type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA, strict: false };

t.test('encodeRequest: exact bodies of the main cases', async (t) => {
  t.strictSame(encode(requests.text), {
    path: '/v1/responses',
    body: { model: 'model-x', instructions: 'You are terse.', input: [user('Hello there')], stream: false, store: false, max_output_tokens: 256, temperature: 0.5 },
  });
  t.strictSame(encode(requests.toolRoundTrip).body, {
    model: 'model-x', instructions: 'Use tools when useful.',
    input: [
      user('Weather in Paris?'),
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '18 C, sunny' },
    ],
    tools: [WEATHER_TOOL], tool_choice: 'auto', stream: false, store: false, max_output_tokens: 200,
  });
  t.strictSame(encode(requests.parallelToolResults).body, {
    model: 'model-x',
    input: [
      user('Weather in Paris and Rome?'),
      { role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.' }] },
      { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_a', output: '18 C' },
      { type: 'function_call_output', call_id: 'call_b', output: '[tool error] city not found' },
      user('Summarise please.'),
    ],
    tools: [WEATHER_TOOL], tool_choice: 'required', parallel_tool_calls: true, stream: false, store: false, max_output_tokens: 200,
  }, 'one output item per result, in call order, is_error as a text mark, the user text after them');
  t.strictSame(encode(requests.reasoning).body, {
    model: 'model-x', input: [user('What is 17 * 23?')], reasoning: { effort: 'high', summary: 'auto' }, stream: false,
    include: ['reasoning.encrypted_content'], store: false, max_output_tokens: 16000,
  }, 'reasoning comes back encrypted so a later turn can replay it without storing anything at OpenAI');
  t.strictSame(encode(requests.countTokens), { path: '/v1/responses/input_tokens', body: { model: 'model-x', input: [user('Hello there')] } },
    'counting sends only what input_tokens takes');
});

t.test('encodeRequest: the other cases', async (t) => {
  const multiTurn = encode(requests.multiTurn).body;
  t.strictSame(multiTurn.input, [user('Hi'), { role: 'assistant', content: [{ type: 'output_text', text: 'Hello! How can I help?' }] }, user('Tell me a joke')]);
  t.notOk('stop' in multiTurn, 'Responses has no stop sequences: dropped');

  const forced = encode(requests.forcedTool).body;
  t.strictSame(forced.tool_choice, { type: 'function', name: 'get_weather' });
  t.equal(forced.parallel_tool_calls, false);
  t.strictSame(forced.tools, [{ type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false }], 'strict is always stated (unstated means true)');

  const [image] = encode(requests.image).body.input as any[];
  t.strictSame(image.content[1], { type: 'input_image', image_url: `data:image/png;base64,${(requests.image.messages[0].content[1] as any).source.data}`, detail: 'auto' });
  const [byUrl] = encode(requests.imageUrl).body.input as any[];
  t.strictSame(byUrl.content[1], { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' }, 'OpenAI fetches URLs itself');

  t.strictSame(encode(requests.structured).body.text, {
    format: { type: 'json_schema', name: 'city', schema: SCHEMA, strict: true },
  });
  const mid = encode(requests.midSystem).body;
  t.equal(mid.instructions, 'Be helpful.');
  t.strictSame((mid.input as any[])[2], { role: 'developer', content: [{ type: 'input_text', text: 'From now on answer in French.' }] },
    'a mid-conversation system message stays in place as a developer message');
  t.equal(encode(requests.streamText).body.stream, true);
});

/** Each fixture as a Responses client would send it. */
const bodies: Record<keyof typeof requests, Record<string, unknown>> = {
  text: { model: 'client-model', instructions: 'You are terse.', input: [{ role: 'user', content: 'Hello there' }], max_output_tokens: 256, temperature: 0.5 },
  multiTurn: {
    model: 'client-model', max_output_tokens: 100,
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello! How can I help?', annotations: [] }] },
      { role: 'user', content: 'Tell me a joke' },
    ],
  },
  toolRoundTrip: {
    model: 'client-model', instructions: 'Use tools when useful.', tool_choice: 'auto', max_output_tokens: 200,
    tools: [{ type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA }],
    input: [
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call_output', call_id: 'call_1', output: '18 C, sunny' },
    ],
  },
  parallelToolResults: {
    model: 'client-model', tool_choice: 'required', parallel_tool_calls: true, max_output_tokens: 200,
    tools: [{ type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA }],
    input: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.' }] },
      { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_a', output: '18 C' },
      { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'city not found' }] },
      { role: 'user', content: 'Summarise please.' },
    ],
  },
  forcedTool: {
    model: 'client-model', tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false, max_output_tokens: 100,
    tools: [{ type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA }], input: 'Weather in Oslo',
  },
  image: {
    model: 'client-model', max_output_tokens: 100,
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is in this picture?' }, { type: 'input_image', image_url: `data:image/png;base64,${(requests.image.messages[0].content[1] as any).source.data}` }] }],
  },
  imageUrl: {
    model: 'client-model', max_output_tokens: 100,
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'Describe' }, { type: 'input_image', image_url: 'https://example.com/cat.png' }] }],
  },
  structured: {
    model: 'client-model', max_output_tokens: 100, input: 'Give me a city as JSON',
    text: { format: { type: 'json_schema', name: 'city', schema: SCHEMA, strict: true } },
  },
  reasoning: { model: 'client-model', input: 'What is 17 * 23?', reasoning: { effort: 'high', summary: 'auto' }, max_output_tokens: 16000 },
  midSystem: {
    model: 'client-model', instructions: 'Be helpful.', max_output_tokens: 100,
    input: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello.' }, { role: 'developer', content: 'From now on answer in French.' }, { role: 'user', content: 'How are you?' }],
  },
  streamText: { model: 'client-model', stream: true, input: 'Hello there', max_output_tokens: 100 },
  countTokens: { model: 'client-model', input: 'Hello there' },
};

/** What a Responses body cannot say: stop sequences, and is_error (a client's own tool output has no such field). */
function expressible(req: CanonRequest): CanonRequest {
  const { stop: _stop, ...rest } = req;
  const messages = rest.messages.map((m) => ({
    ...m,
    content: m.content.map((b) => {
      if (b.type !== 'tool_result' || !b.isError) return b;
      const { isError: _isError, ...result } = b;
      return result;
    }),
  }));
  return { ...rest, messages, extras: {} };
}

t.test('decodeRequest: each fixture as a Responses client sends it', async (t) => {
  for (const [name, body] of Object.entries(bodies)) {
    const fixture = requests[name as keyof typeof requests];
    const decoded = codec.decodeRequest(structuredClone(body), fixture.operation, decodeCtx);
    t.strictSame({ ...decoded, extras: {} }, expressible(fixture), name);
    t.ok(decoded.extras[FORMAT], `${name}: the client's own fields are kept for its answer`);
  }
});

t.test('decodeRequest: the fields the answer echoes and the bridge resolves ride in extras', async (t) => {
  const decoded = codec.decodeRequest({
    ...bodies.text, store: false, include: ['reasoning.encrypted_content'], previous_response_id: 'resp_prev', metadata: { team: 'a' },
    prompt_cache_key: 'k1', safety_identifier: 'user-7', truncation: 'auto', service_tier: 'flex', text: { verbosity: 'low' },
  }, 'generate', decodeCtx);
  t.equal(decoded.user, 'user-7');
  t.strictSame(decoded.extras[FORMAT], {
    store: false, include: ['reasoning.encrypted_content'], previous_response_id: 'resp_prev', metadata: { team: 'a' },
    prompt_cache_key: 'k1', truncation: 'auto', service_tier: 'flex', safety_identifier: 'user-7', instructions: 'You are terse.',
    text: { verbosity: 'low' }, temperature: 0.5, max_output_tokens: 256,
  });
});

t.test('decodeRequest: bad bodies are 400s naming the parameter', async (t) => {
  const bad = (body: Record<string, unknown>, param: string, what: string) =>
    t.match(thrown(() => codec.decodeRequest({ model: 'm', ...body }, 'generate', decodeCtx)), { status: 400, param }, what);
  bad({ input: 42 }, 'input', 'input neither string nor list');
  bad({ input: ['<2 more items of the same kind>'] }, 'input[0]', 'a list entry that is not an item');
  bad({ input: [{ role: 'tool', content: 'x' }] }, 'input[0].role', 'a chat role');
  bad({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id', 'a call without call_id');
  bad({ input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'input[0].content[0].type', 'audio input');
  bad({ input: [{ role: 'user', content: [{ type: 'input_image' }] }] }, 'input[0].content[0]', 'an image without a source');
  bad({ input: 'x', max_output_tokens: 0 }, 'max_output_tokens', 'an output cap below 1');
  bad({ input: 'x', temperature: 3 }, 'temperature', 'a temperature out of range');
  bad({ input: 'x', reasoning: { effort: 'extreme' } }, 'reasoning.effort', 'an unknown effort');
  bad({ input: 'x', text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema', 'a json_schema without a schema');
  bad({ input: 'x', tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice', 'a named tool that is not declared');
  bad({ input: 'x', previous_response_id: 'resp_1', conversation: 'conv_1' }, 'previous_response_id', 'both ways of continuing');
});
