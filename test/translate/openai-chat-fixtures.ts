// The chat twins of the canonical fixtures (test/translate/canonical-fixtures.ts): for each canonical request the chat
// body that means the same, for each answer the chat.completion an upstream would send, for each stream its chunks.
import type { CanonRequest, CodecContext } from '../../core/canonical.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';

export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
export const CREATED = 1767225600;

export const ctxFor = (request: CanonRequest, clientModel = 'client-model'): CodecContext =>
  ({ request, clientModel, defaults: { maxOutputTokens: 4096 } });

const weatherTool = { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA } };
const user = (content: unknown) => ({ role: 'user', content });
const system = (content: string) => ({ role: 'system', content });

/** Chat bodies, by canonical request name: what a chat client sends, and what encodeRequest sends a chat upstream. */
export const chatBodies: Record<Exclude<keyof typeof requests, 'countTokens'>, Record<string, unknown>> = {
  text: { model: 'model-x', messages: [system('You are terse.'), user('Hello there')], max_completion_tokens: 256, temperature: 0.5 },
  multiTurn: {
    model: 'model-x',
    messages: [user('Hi'), { role: 'assistant', content: 'Hello! How can I help?' }, user('Tell me a joke')],
    max_completion_tokens: 100, stop: ['END'],
  },
  toolRoundTrip: {
    model: 'model-x',
    messages: [
      system('Use tools when useful.'),
      user('Weather in Paris?'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '18 C, sunny' },
    ],
    tools: [weatherTool], tool_choice: 'auto', max_completion_tokens: 200,
  },
  parallelToolResults: {
    model: 'model-x',
    messages: [
      user('Weather in Paris and Rome?'),
      {
        role: 'assistant', content: 'Checking both.', tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '18 C' },
      { role: 'tool', tool_call_id: 'call_b', content: '[tool error] city not found' },
      user('Summarise please.'),
    ],
    tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: true, max_completion_tokens: 200,
  },
  forcedTool: {
    model: 'model-x',
    messages: [user('Weather in Oslo')],
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } }, parallel_tool_calls: false, max_completion_tokens: 100,
  },
  image: {
    model: 'model-x',
    messages: [user([{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }])],
    max_completion_tokens: 100,
  },
  imageUrl: {
    model: 'model-x',
    messages: [user([{ type: 'text', text: 'Describe' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }])],
    max_completion_tokens: 100,
  },
  structured: {
    model: 'model-x',
    messages: [user('Give me a city as JSON')],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }, strict: true },
    },
    max_completion_tokens: 100,
  },
  reasoning: { model: 'model-x', messages: [user('What is 17 * 23?')], reasoning_effort: 'high', max_completion_tokens: 16000 },
  midSystem: {
    model: 'model-x',
    messages: [system('Be helpful.'), user('Hi'), { role: 'assistant', content: 'Hello.' }, system('From now on answer in French.'), user('How are you?')],
    max_completion_tokens: 100,
  },
  streamText: { model: 'model-x', messages: [user('Hello there')], max_completion_tokens: 100, stream: true, stream_options: { include_usage: true } },
};

const usage = (prompt: number, completion: number, cached = 0, reasoning = 0, cacheWrite = 0) => ({
  prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0, ...(cacheWrite ? { cache_write_tokens: cacheWrite } : {}) },
  completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
});

const answer = (id: string, message: Record<string, unknown>, finish: string, u: unknown) => ({
  id, object: 'chat.completion', created: CREATED, model: 'model-x',
  choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, annotations: [], ...message }, logprobs: null, finish_reason: finish }],
  usage: u, service_tier: 'default', system_fingerprint: 'fp_x',
});

const call = (id: string, city: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: `{"city":"${city}"}` } });

/** Whole answers a chat upstream sends, by canonical response name (reasoning as an OpenAI-compatible server shows it). */
export const upstreamAnswers = {
  text: answer('up-1', { content: 'Hi there!' }, 'stop', usage(12, 4)),
  cached: answer('up-2', { content: 'Cached.' }, 'stop', usage(1200, 3, 1000, 0, 100)),
  toolCall: answer('up-3', { tool_calls: [call('call_9', 'Paris')] }, 'tool_calls', usage(40, 12)),
  parallelToolCalls: answer('up-4', { content: 'Let me check.', tool_calls: [call('call_p1', 'Paris'), call('call_p2', 'Rome')] }, 'tool_calls', usage(45, 30)),
  cut: answer('up-5', { content: 'The answer is a long' }, 'length', usage(10, 5)),
  filtered: answer('up-6', {}, 'content_filter', usage(10, 0)),
  reasoning: answer('up-7', { content: '391', reasoning_content: '17 * 23 = 391.' }, 'stop', usage(20, 60, 0, 50)),
};

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}, id = 'up-1') =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: CREATED, model: 'model-x', choices, usage: null, ...extra })}\n\n`;
const d = (delta: unknown, finish: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finish });
const DONE = 'data: [DONE]\n\n';

/** Chunk streams a chat upstream sends (with the usage chunk it is always asked for), by canonical stream name. */
export const upstreamStreams: Record<string, string> = {
  text: [
    chunk([d({ role: 'assistant', content: '', refusal: null })]),
    chunk([d({ content: 'Hi ' })]),
    chunk([d({ content: 'there!' })]),
    chunk([d({}, 'stop')]),
    chunk([], { usage: usage(12, 4) }),
    DONE,
  ].join(''),
  toolCall: [
    chunk([d({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '' } }] })], {}, 'up-3'),
    chunk([d({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] })], {}, 'up-3'),
    chunk([d({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Par' } }] })], {}, 'up-3'),
    chunk([d({ tool_calls: [{ index: 0, function: { arguments: 'is"}' } }] })], {}, 'up-3'),
    chunk([d({}, 'tool_calls')], {}, 'up-3'),
    chunk([], { usage: usage(40, 12) }, 'up-3'),
    DONE,
  ].join(''),
  parallelToolCalls: [
    chunk([d({ role: 'assistant', content: '' })], {}, 'up-4'),
    chunk([d({ content: 'Let me check.' })], {}, 'up-4'),
    chunk([d({ tool_calls: [{ index: 0, id: 'call_p1', type: 'function', function: { name: 'get_weather', arguments: '' } }] })], {}, 'up-4'),
    chunk([d({ tool_calls: [{ index: 1, id: 'call_p2', type: 'function', function: { name: 'get_weather', arguments: '' } }] })], {}, 'up-4'),
    chunk([d({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] })], {}, 'up-4'),
    chunk([d({ tool_calls: [{ index: 1, function: { arguments: '{"city":"Rome"}' } }] })], {}, 'up-4'),
    chunk([d({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] })], {}, 'up-4'),
    chunk([d({}, 'tool_calls')], {}, 'up-4'),
    chunk([], { usage: usage(45, 30) }, 'up-4'),
    DONE,
  ].join(''),
  reasoning: [
    chunk([d({ role: 'assistant', content: '' })], {}, 'up-7'),
    chunk([d({ reasoning_content: '17 * 23 ' })], {}, 'up-7'),
    chunk([d({ reasoning_content: '= 391.' })], {}, 'up-7'),
    chunk([d({ content: '391' })], {}, 'up-7'),
    chunk([d({}, 'stop')], {}, 'up-7'),
    chunk([], { usage: usage(20, 60, 0, 50) }, 'up-7'),
    DONE,
  ].join(''),
  cut: [
    chunk([d({ role: 'assistant', content: '' })], {}, 'up-5'),
    chunk([d({ content: 'The answer is a long' })], {}, 'up-5'),
    chunk([d({}, 'length')], {}, 'up-5'),
    chunk([], { usage: usage(10, 5) }, 'up-5'),
    DONE,
  ].join(''),
};

/**
 * A realistic chat client request (chat has no recorded client in test/fixtures/clients/): a coding agent's
 * third turn, built from wire-formats.md §1 — system and developer prompts, an image, parallel function calls and their
 * results, a custom apply_patch tool with a grammar, strict and loose schemas, reasoning, a stream with usage, and the
 * OpenAI bookkeeping fields a translated request drops.
 */
export const agentRequest = {
  model: 'gpt-5',
  messages: [
    { role: 'system', content: 'You are a coding agent. Work in small verified steps.' },
    { role: 'developer', content: [{ type: 'text', text: 'Project rules: TypeScript, no new dependencies.' }] },
    {
      role: 'user', content: [
        { type: 'text', text: 'Fix the failing test in src/sum.ts; the screenshot shows the error.' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
      ],
    },
    {
      role: 'assistant', content: 'Let me read the code first.', tool_calls: [
        { id: 'call_read', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/sum.ts"}' } },
        { id: 'call_ls', type: 'function', function: { name: 'list_dir', arguments: '{"path":"src"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_read', content: 'export const sum = (a: number, b: number) => a - b;' },
    { role: 'tool', tool_call_id: 'call_ls', content: [{ type: 'text', text: 'sum.ts\nsum.test.ts' }] },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_patch', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch\n*** Update File: src/sum.ts\n-a - b\n+a + b\n*** End Patch' } }] },
    { role: 'tool', tool_call_id: 'call_patch', content: 'Success. Updated src/sum.ts' },
    { role: 'user', content: 'Good. Now run the tests.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_sh', type: 'function', function: { name: 'shell', arguments: '{"command":["npm","test"],"timeout_ms":60000}' } }] },
    { role: 'tool', tool_call_id: 'call_sh', content: '1 passing' },
  ],
  tools: [
    {
      type: 'function', function: {
        name: 'read_file', description: 'Read a file of the workspace', strict: true,
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
      },
    },
    { type: 'function', function: { name: 'list_dir', description: 'List a directory', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
    {
      type: 'function', function: {
        name: 'shell', description: 'Run a command',
        parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } }, timeout_ms: { type: 'integer', minimum: 1 } }, required: ['command'] },
      },
    },
    { type: 'custom', custom: { name: 'apply_patch', description: 'Edit files with a patch', format: { type: 'grammar', grammar: { syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"' } } } },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning_effort: 'medium',
  max_completion_tokens: 32000,
  stream: true,
  stream_options: { include_usage: true },
  safety_identifier: 'user-42',
  store: false,
  metadata: { session: 'sess-1' },
  prompt_cache_key: 'cache-sess-1',
  service_tier: 'auto',
  verbosity: 'low',
};
