// Canonical requests, answers and event streams every codec is tested against: each format's codec encodes these into
// its own grammar and decodes its own grammar back into them, so any two codecs compose (A decode → B encode).
import type { CanonEvent, CanonRequest, CanonResponse } from '../../core/canonical.ts';

export const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['C', 'F'] } },
  required: ['city'],
  additionalProperties: false,
};

const base = (over: Partial<CanonRequest>): CanonRequest => ({
  operation: 'generate', model: 'model-x', stream: false, system: [], messages: [], tools: [], extras: {}, ...over,
});

/** Requests, by case name. */
export const requests = {
  text: base({
    system: [{ type: 'text', text: 'You are terse.' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
    maxOutputTokens: 256,
    temperature: 0.5,
  }),
  multiTurn: base({
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello! How can I help?' }] },
      { role: 'user', content: [{ type: 'text', text: 'Tell me a joke' }] },
    ],
    maxOutputTokens: 100,
    stop: ['END'],
  }),
  toolRoundTrip: base({
    system: [{ type: 'text', text: 'Use tools when useful.' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: '18 C, sunny' }] }] },
    ],
    tools: [{ kind: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA }],
    toolChoice: { type: 'auto' },
    maxOutputTokens: 200,
  }),
  parallelToolResults: base({
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant', content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      {
        role: 'user', content: [
          { type: 'tool_result', callId: 'call_a', content: [{ type: 'text', text: '18 C' }] },
          { type: 'tool_result', callId: 'call_b', content: [{ type: 'text', text: 'city not found' }], isError: true },
          { type: 'text', text: 'Summarise please.' },
        ],
      },
    ],
    tools: [{ kind: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA }],
    toolChoice: { type: 'required' },
    parallelToolCalls: true,
    maxOutputTokens: 200,
  }),
  forcedTool: base({
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Oslo' }] }],
    tools: [{ kind: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA }],
    toolChoice: { type: 'tool', name: 'get_weather' },
    parallelToolCalls: false,
    maxOutputTokens: 100,
  }),
  image: base({
    messages: [{
      role: 'user', content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' } },
      ],
    }],
    maxOutputTokens: 100,
  }),
  imageUrl: base({
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Describe' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png' } }] }],
    maxOutputTokens: 100,
  }),
  structured: base({
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Give me a city as JSON' }] }],
    output: { type: 'json_schema', name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }, strict: true },
    maxOutputTokens: 100,
  }),
  reasoning: base({
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is 17 * 23?' }] }],
    reasoning: { enabled: true, effort: 'high', show: true },
    maxOutputTokens: 16000,
  }),
  midSystem: base({
    system: [{ type: 'text', text: 'Be helpful.' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
      { role: 'system', content: [{ type: 'text', text: 'From now on answer in French.' }] },
      { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
    ],
    maxOutputTokens: 100,
  }),
  streamText: base({ stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }], maxOutputTokens: 100 }),
  countTokens: base({ operation: 'count_tokens', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }] }),
} satisfies Record<string, CanonRequest>;

const usage = (input: number, output: number, over: Partial<CanonResponse['usage']> = {}) =>
  ({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0, ...over });

/** Whole answers, by case name. */
export const responses = {
  text: { id: 'up-1', model: 'model-x', content: [{ type: 'text', text: 'Hi there!' }], stop: 'end', usage: usage(12, 4) },
  cached: { id: 'up-2', model: 'model-x', content: [{ type: 'text', text: 'Cached.' }], stop: 'end', usage: usage(1200, 3, { cacheRead: 1000, cacheWrite: 100 }) },
  toolCall: {
    id: 'up-3', model: 'model-x', stop: 'tool_use', usage: usage(40, 12),
    content: [{ type: 'tool_call', id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }],
  },
  parallelToolCalls: {
    id: 'up-4', model: 'model-x', stop: 'tool_use', usage: usage(45, 30),
    content: [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_call', id: 'call_p1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', id: 'call_p2', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ],
  },
  cut: { id: 'up-5', model: 'model-x', content: [{ type: 'text', text: 'The answer is a long' }], stop: 'max_tokens', usage: usage(10, 5) },
  filtered: { id: 'up-6', model: 'model-x', content: [], stop: 'content_filter', usage: usage(10, 0) },
  reasoning: {
    id: 'up-7', model: 'model-x', stop: 'end', usage: usage(20, 60, { reasoning: 50 }),
    content: [
      { type: 'reasoning', text: '17 * 23 = 391.', signature: { format: 'anthropic-messages', value: 'sig-abc' } },
      { type: 'text', text: '391' },
    ],
  },
} satisfies Record<string, CanonResponse>;

/** Event streams, by case name; each folds (collectEvents) into the response of the same name. */
export const streams: Record<string, { events: CanonEvent[]; response: CanonResponse }> = {
  text: {
    response: responses.text,
    events: [
      { type: 'start', id: 'up-1', model: 'model-x', usage: { input: 12 } },
      { type: 'block_start', index: 0, block: { type: 'text' } },
      { type: 'delta', index: 0, text: 'Hi ' },
      { type: 'delta', index: 0, text: 'there!' },
      { type: 'block_end', index: 0 },
      { type: 'finish', stop: 'end', usage: usage(12, 4) },
    ],
  },
  toolCall: {
    response: responses.toolCall,
    events: [
      { type: 'start', id: 'up-3', model: 'model-x' },
      { type: 'block_start', index: 0, block: { type: 'tool_call', id: 'call_9', name: 'get_weather' } },
      { type: 'delta', index: 0, arguments: '{"ci' },
      { type: 'delta', index: 0, arguments: 'ty":"Par' },
      { type: 'delta', index: 0, arguments: 'is"}' },
      { type: 'block_end', index: 0 },
      { type: 'finish', stop: 'tool_use', usage: usage(40, 12) },
    ],
  },
  parallelToolCalls: {
    response: responses.parallelToolCalls,
    events: [
      { type: 'start', id: 'up-4', model: 'model-x' },
      { type: 'block_start', index: 0, block: { type: 'text' } },
      { type: 'delta', index: 0, text: 'Let me check.' },
      { type: 'block_end', index: 0 },
      { type: 'block_start', index: 1, block: { type: 'tool_call', id: 'call_p1', name: 'get_weather' } },
      { type: 'block_start', index: 2, block: { type: 'tool_call', id: 'call_p2', name: 'get_weather' } },
      // Interleaved fragments, as chat streams may send them.
      { type: 'delta', index: 1, arguments: '{"city":' },
      { type: 'delta', index: 2, arguments: '{"city":"Rome"}' },
      { type: 'delta', index: 1, arguments: '"Paris"}' },
      { type: 'block_end', index: 1 },
      { type: 'block_end', index: 2 },
      { type: 'finish', stop: 'tool_use', usage: usage(45, 30) },
    ],
  },
  reasoning: {
    response: responses.reasoning,
    events: [
      { type: 'start', id: 'up-7', model: 'model-x', usage: { input: 20 } },
      { type: 'block_start', index: 0, block: { type: 'reasoning' } },
      { type: 'delta', index: 0, text: '17 * 23 ' },
      { type: 'delta', index: 0, text: '= 391.' },
      { type: 'delta', index: 0, signature: { format: 'anthropic-messages', value: 'sig-abc' } },
      { type: 'block_end', index: 0 },
      { type: 'block_start', index: 1, block: { type: 'text' } },
      { type: 'delta', index: 1, text: '391' },
      { type: 'block_end', index: 1 },
      { type: 'finish', stop: 'end', usage: usage(20, 60, { reasoning: 50 }) },
    ],
  },
  cut: {
    response: responses.cut,
    events: [
      { type: 'start', id: 'up-5', model: 'model-x' },
      { type: 'block_start', index: 0, block: { type: 'text' } },
      { type: 'delta', index: 0, text: 'The answer is a long' },
      { type: 'block_end', index: 0 },
      { type: 'finish', stop: 'max_tokens', usage: usage(10, 5) },
    ],
  },
};

/** A stream that fails after it began: encoders must end it with the client format's own error, never a clean finish. */
export const failingStream: CanonEvent[] = [
  { type: 'start', id: 'up-8', model: 'model-x' },
  { type: 'block_start', index: 0, block: { type: 'text' } },
  { type: 'delta', index: 0, text: 'Partial' },
  { type: 'error', error: { status: 529, kind: 'overloaded', message: 'Overloaded' } },
];
