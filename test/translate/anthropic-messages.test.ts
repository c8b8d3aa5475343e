// The Anthropic Messages codec on every canonical fixture request: the exact upstream body encodeRequest makes, the
// canonical request a client's equivalent Messages body decodes to, and decode(encode(x)) = x where nothing is lost.
import t from 'tap';
import type { CanonRequest } from '../../core/canonical.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { ctxFor, DEFAULT_MAX } from './anthropic-messages-helpers.ts';

const encode = (req: CanonRequest) => codec.encodeRequest(req, ctxFor(req));
const decode = (body: Record<string, unknown>, op: CanonRequest['operation'] = 'generate') =>
  codec.decodeRequest(body, op, { model: 'model-x', path: op === 'count_tokens' ? '/v1/messages/count_tokens' : '/v1/messages', query: '' });

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });
const text = (s: string) => ({ type: 'text', text: s });
const WEATHER_TOOL = { name: 'get_weather', description: 'Current weather for a city', input_schema: WEATHER_SCHEMA };
const PNG = requests.image.messages[0].content[1].type === 'image' && requests.image.messages[0].content[1].source.kind === 'base64'
  ? requests.image.messages[0].content[1].source.data : '';

/** The exact body each fixture becomes for an Anthropic upstream. */
const BODIES: Record<keyof typeof requests, Record<string, unknown>> = {
  text: { model: 'model-x', max_tokens: 256, system: [text('You are terse.')], messages: [user([text('Hello there')])], temperature: 0.5 },
  multiTurn: {
    model: 'model-x', max_tokens: 100, stop_sequences: ['END'],
    messages: [user([text('Hi')]), assistant([text('Hello! How can I help?')]), user([text('Tell me a joke')])],
  },
  toolRoundTrip: {
    model: 'model-x', max_tokens: 200, system: [text('Use tools when useful.')],
    messages: [
      user([text('Weather in Paris?')]),
      assistant([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]),
      user([{ type: 'tool_result', tool_use_id: 'call_1', content: [text('18 C, sunny')] }]),
    ],
    tools: [WEATHER_TOOL], tool_choice: { type: 'auto' },
  },
  parallelToolResults: {
    model: 'model-x', max_tokens: 200,
    messages: [
      user([text('Weather in Paris and Rome?')]),
      assistant([
        text('Checking both.'),
        { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { city: 'Rome' } },
      ]),
      user([
        { type: 'tool_result', tool_use_id: 'call_a', content: [text('18 C')] },
        { type: 'tool_result', tool_use_id: 'call_b', content: [text('city not found')], is_error: true },
        text('Summarise please.'),
      ]),
    ],
    tools: [WEATHER_TOOL], tool_choice: { type: 'any', disable_parallel_tool_use: false },
  },
  forcedTool: {
    model: 'model-x', max_tokens: 100, messages: [user([text('Weather in Oslo')])],
    tools: [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }],
    tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
  },
  image: {
    model: 'model-x', max_tokens: 100,
    messages: [user([text('What is in this picture?'), { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }])],
  },
  imageUrl: {
    model: 'model-x', max_tokens: 100,
    messages: [user([text('Describe'), { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } }])],
  },
  structured: {
    model: 'model-x', max_tokens: 100, messages: [user([text('Give me a city as JSON')])],
    tools: [{
      name: 'city', description: 'Give your final answer by calling this tool: its input is the answer.',
      input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
    }],
    tool_choice: { type: 'tool', name: 'city' },
  },
  reasoning: {
    model: 'model-x', max_tokens: 16000, messages: [user([text('What is 17 * 23?')])],
    thinking: { type: 'enabled', budget_tokens: 10240 },
  },
  midSystem: {
    model: 'model-x', max_tokens: 100, system: [text('Be helpful.')],
    messages: [user([text('Hi')]), assistant([text('Hello.')]), user([text('[system] From now on answer in French.'), text('How are you?')])],
  },
  streamText: { model: 'model-x', max_tokens: 100, stream: true, messages: [user([text('Hello there')])] },
  countTokens: { model: 'model-x', messages: [user([text('Hello there')])] },
};

t.test('every fixture request encodes to its exact Anthropic body, path and version header', async (t) => {
  for (const [name, req] of Object.entries(requests) as [keyof typeof requests, CanonRequest][]) {
    const out = encode(req);
    t.strictSame(out.body, BODIES[name], `${name}: body`);
    t.equal(out.path, name === 'countTokens' ? '/v1/messages/count_tokens' : '/v1/messages', `${name}: path`);
    t.strictSame(out.headers, { 'anthropic-version': '2023-06-01' }, `${name}: headers`);
  }
});

t.test('max_tokens, which Anthropic requires, comes from the group default when the client gave none', async (t) => {
  const req: CanonRequest = { ...requests.text, maxOutputTokens: undefined };
  t.equal(encode(req).body.max_tokens, DEFAULT_MAX);
  t.notOk('max_tokens' in encode(requests.countTokens).body, 'count_tokens takes none (the API refuses it there)');
});

// Fixtures whose every detail has an Anthropic form: decoding the body they encode to gives them back exactly.
const LOSSLESS = ['text', 'multiTurn', 'toolRoundTrip', 'parallelToolResults', 'forcedTool', 'image', 'imageUrl', 'streamText', 'countTokens'] as const;

t.test('decode(encode(x)) = x for the fixtures Anthropic can say in full', async (t) => {
  for (const name of LOSSLESS) {
    const req = requests[name];
    t.strictSame(decode(encode(req).body, req.operation), req, name);
  }
});

t.test('a client\'s own spelling decodes to the canonical fixture: string system and content, no block wrapping', async (t) => {
  t.strictSame(decode({ model: 'claude-x', max_tokens: 256, system: 'You are terse.', messages: [user('Hello there')], temperature: 0.5 }), requests.text, 'text');
  t.strictSame(decode({
    model: 'claude-x', max_tokens: 100, stop_sequences: ['END'],
    messages: [user('Hi'), assistant('Hello! How can I help?'), user('Tell me a joke')],
  }), requests.multiTurn, 'multiTurn');
  t.strictSame(decode({
    model: 'claude-x', max_tokens: 200, system: 'Use tools when useful.',
    messages: [
      user('Weather in Paris?'),
      assistant([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]),
      user([{ type: 'tool_result', tool_use_id: 'call_1', content: '18 C, sunny' }]),
    ],
    tools: [{ ...WEATHER_TOOL, type: 'custom' }], tool_choice: { type: 'auto' },
  }), requests.toolRoundTrip, 'toolRoundTrip: tool_result content as a string, the tool typed custom');
  t.strictSame(decode({ model: 'claude-x', stream: true, max_tokens: 100, messages: [user('Hello there')] }), requests.streamText, 'streamText');
  t.strictSame(decode({ model: 'claude-x', messages: [user('Hello there')] }, 'count_tokens'), requests.countTokens, 'countTokens');
});

t.test('the lossy fixtures: what the Anthropic form keeps of them', async (t) => {
  const reasoning = decode(encode(requests.reasoning).body);
  t.strictSame(reasoning.reasoning, { enabled: true, budgetTokens: 10240, show: true }, 'effort high → budget 10240, read back as the budget');
  t.strictSame(decode({ ...BODIES.reasoning, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }).reasoning,
    { enabled: true, effort: 'high', show: true }, 'adaptive thinking with an effort: the effort itself');

  const mid = decode(encode(requests.midSystem).body);
  t.strictSame(mid.messages.at(-1), { role: 'user', content: [{ type: 'text', text: '[system] From now on answer in French.' }, { type: 'text', text: 'How are you?' }] },
    'a mid-conversation system message is user text in its place');

  const structured = decode({ model: 'claude-x', max_tokens: 100, messages: [user('Give me a city as JSON')], output_config: { format: { type: 'json_schema', schema: requests.structured.output!.type === 'json_schema' ? requests.structured.output!.schema : {} } } });
  t.strictSame(structured.output, { type: 'json_schema', name: 'output', schema: (requests.structured.output as { schema: unknown }).schema },
    'a client\'s native output_config.format is the canonical JSON output (named "output": Anthropic has no name)');
  t.strictSame(decode({ model: 'claude-x', max_tokens: 100, messages: [user('x')], output_format: { type: 'json_schema', schema: { type: 'object' } } }).output,
    { type: 'json_schema', name: 'output', schema: { type: 'object' } }, 'and the older beta\'s top-level output_format');
});
