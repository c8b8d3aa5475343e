// Tool calls on the simulator: the call itself, whole and streamed, and the reply to a tool result.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { chunksOf, framesOf, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { input: { type: 'string' } } } } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
];
const user = { role: 'user', content: 'Weather in Paris?' };
// By hand: arguments '{"input":"Weather in Paris?"}' = {|"|input|"|:|"|Weather|in|Paris|?|"|} = 12 tokens.
// prompt = (3 + 4: Weather|in|Paris|?) + 3 = 10.
const args = '{"input":"Weather in Paris?"}';

t.test('non-stream tool call to the first function tool', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [user], tools });
  const body = await res.json();
  const seq = body.id.slice('chatcmpl-sim-'.length);
  t.same(body.choices, [{
    index: 0,
    message: {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `call_sim_${seq}`, type: 'function', function: { name: 'get_weather', arguments: args } }],
      refusal: null,
      annotations: [],
    },
    logprobs: null,
    finish_reason: 'tool_calls',
  }]);
  t.same(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments), { input: 'Weather in Paris?' });
  t.equal(body.usage.prompt_tokens, 10);
  t.equal(body.usage.completion_tokens, 12);
  t.equal(body.usage.total_tokens, 22);
});

t.test('tool_choice naming a function picks it', async (t) => {
  const tool_choice = { type: 'function', function: { name: 'get_time' } };
  const body = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [user], tools, tool_choice })).json();
  t.equal(body.choices[0].message.tool_calls[0].function.name, 'get_time');
});

t.test('tool_choice none or no tools gives a text reply', async (t) => {
  for (const extra of [{ tools, tool_choice: 'none' }, { tools: [] }]) {
    const body = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [user], ...extra })).json();
    t.equal(body.choices[0].message.content, 'Echo: Weather in Paris?');
    t.equal(body.choices[0].finish_reason, 'stop');
  }
});

t.test('after a tool result the model reports it', async (t) => {
  const messages = [
    user,
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":21}' },
  ];
  const body = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages, tools })).json();
  t.equal(body.choices[0].message.content, 'Tool result: {"temp_c":21}');
  t.equal(body.choices[0].finish_reason, 'stop');
  // By hand: {"temp_c":21} = {|"|temp|_|c|"|:|21|} = 9 tokens; the assistant turn has no text.
  // prompt = (3 + 4) + (3 + 0) + (3 + 9) + 3 = 25; reply = Tool|result|: + 9 = 12.
  t.equal(body.usage.prompt_tokens, 25);
  t.equal(body.usage.completion_tokens, 12);
});

t.test('streamed tool call: a head fragment, argument pieces, tool_calls finish', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', {
    model: 'gpt-4o-mini', messages: [user], tools, stream: true, stream_options: { include_usage: true },
  });
  const text = await res.text();
  t.ok(text.endsWith('data: [DONE]\n\n'));
  for (const frame of framesOf(text)) t.match(frame, /^data: [^\n]+$/);
  const chunks = chunksOf(text);
  const seq = chunks[0].id.slice('chatcmpl-sim-'.length);
  t.same(chunks[0].choices[0].delta, {
    role: 'assistant',
    content: null,
    tool_calls: [{ index: 0, id: `call_sim_${seq}`, type: 'function', function: { name: 'get_weather', arguments: '' } }],
    refusal: null,
  });
  const pieces = chunks.slice(1, -2).map((c) => c.choices[0].delta.tool_calls);
  t.equal(pieces.length, 3, 'arguments arrive in 3 pieces');
  for (const calls of pieces) {
    t.equal(calls.length, 1);
    t.same(Object.keys(calls[0]).sort(), ['function', 'index']);
    t.equal(calls[0].index, 0);
  }
  const joined = pieces.map((calls) => calls[0].function.arguments).join('');
  t.equal(joined, args);
  t.same(JSON.parse(joined), { input: 'Weather in Paris?' }, 'fragments concatenate to valid JSON');
  t.same(chunks[chunks.length - 2].choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]);
  t.same(chunks[chunks.length - 1].choices, []);
  t.equal(chunks[chunks.length - 1].usage.completion_tokens, 12);
});
