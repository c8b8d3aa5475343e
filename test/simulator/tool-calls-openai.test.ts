// Tool calls on the simulator's OpenAI dialects: parallel calls whole and streamed in each grammar, read by the openai SDK.
import OpenAI from 'openai';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { chunksOf, eventsOf, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());
const client = new OpenAI({ apiKey: 'sk-test-upstream', baseURL: sim.url + '/v1', maxRetries: 0 });

const ask = 'Call get_weather and get_time for Paris';
// By hand: the ask = Call|get|_|weather|and|get|_|time|for|Paris = 10, prompt (3 + 10) + 3 = 16; each call's arguments
// {"input":"Call get_weather and get_time for Paris"} = {|"|input|"|:|"|Call|get|_|weather|and|get|_|time|for|Paris|"|} = 18.
const args = JSON.stringify({ input: ask });
const chatTools = ['get_weather', 'get_time', 'get_news'].map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } }));
const responsesTools = ['get_weather', 'get_time', 'get_news'].map((name) => ({ type: 'function' as const, name, parameters: { type: 'object', properties: {} }, strict: false }));
const seqOf = (res: Response) => res.headers.get('x-request-id')!.slice('req_sim_'.length);

t.test('chat: the prompt names two tools, the reply calls both in one message', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools: chatTools });
  const n = seqOf(res);
  const body = await res.json();
  t.same(body.choices[0].message.tool_calls, [
    { id: `call_sim_${n}`, type: 'function', function: { name: 'get_weather', arguments: args } },
    { id: `call_sim_${n}_1`, type: 'function', function: { name: 'get_time', arguments: args } },
  ]);
  t.equal(body.choices[0].finish_reason, 'tool_calls');
  t.same([body.usage.prompt_tokens, body.usage.completion_tokens], [16, 36]);
  const single = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools: chatTools, parallel_tool_calls: false })).json();
  t.same(single.choices[0].message.tool_calls.map((c: { function: { name: string } }) => c.function.name), ['get_weather'], 'parallel_tool_calls false: one call');
});

t.test('chat stream: per call a head fragment (index, id, type, name, empty arguments), then argument pieces keyed by index only', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools: chatTools, stream: true });
  const n = seqOf(res);
  const fragments = chunksOf(await res.text()).flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
  const heads = fragments.filter((f: { id?: string }) => f.id !== undefined);
  t.same(heads, [
    { index: 0, id: `call_sim_${n}`, type: 'function', function: { name: 'get_weather', arguments: '' } },
    { index: 1, id: `call_sim_${n}_1`, type: 'function', function: { name: 'get_time', arguments: '' } },
  ]);
  for (const index of [0, 1]) {
    const pieces = fragments.filter((f: { index: number; id?: string }) => f.index === index && f.id === undefined);
    t.ok(pieces.length >= 2, `call ${index}: the arguments come in several pieces`);
    t.ok(pieces.every((f: object) => Object.keys(f).join() === 'index,function'), 'later fragments carry only index and arguments');
    t.equal(pieces.map((f: { function: { arguments: string } }) => f.function.arguments).join(''), args);
  }
});

t.test('chat stream through the SDK: chat.completions.stream accumulates both calls', async (t) => {
  const stream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools: chatTools });
  const done: Array<{ index: number; name: string; arguments: string }> = [];
  stream.on('tool_calls.function.arguments.done', (e) => done.push({ index: e.index, name: e.name, arguments: e.arguments }));
  const final = await stream.finalChatCompletion();
  const calls = final.choices[0].message.tool_calls!.map((c) => (c.type === 'function' ? [c.function.name, c.function.arguments] : []));
  t.same(calls, [['get_weather', args], ['get_time', args]]);
  t.same(done, [{ index: 0, name: 'get_weather', arguments: args }, { index: 1, name: 'get_time', arguments: args }]);
  t.equal(final.choices[0].finish_reason, 'tool_calls');
});

t.test('Responses: two function_call items, whole', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: ask, tools: responsesTools });
  const n = seqOf(res);
  const body = await res.json();
  t.same(body.output, [
    { id: `fc_sim_${n}`, type: 'function_call', status: 'completed', call_id: `call_sim_${n}`, name: 'get_weather', arguments: args },
    { id: `fc_sim_${n}_1`, type: 'function_call', status: 'completed', call_id: `call_sim_${n}_1`, name: 'get_time', arguments: args },
  ]);
  t.same([body.usage.input_tokens, body.usage.output_tokens], [16, 36]);
});

t.test('Responses stream: per item output_item.added (arguments ""), argument deltas, arguments.done, output_item.done', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: ask, tools: responsesTools, stream: true });
  const events = eventsOf(await res.text());
  const kinds = events.map((e) => e.event);
  t.same(kinds.filter((k) => k !== 'response.function_call_arguments.delta'), [
    'response.created', 'response.in_progress',
    'response.output_item.added', 'response.function_call_arguments.done', 'response.output_item.done',
    'response.output_item.added', 'response.function_call_arguments.done', 'response.output_item.done',
    'response.completed',
  ]);
  t.same(events.map((e) => e.data.sequence_number), events.map((_, i) => i));
  for (const output_index of [0, 1]) {
    const added = events.find((e) => e.event === 'response.output_item.added' && e.data.output_index === output_index)!.data.item;
    t.same([added.type, added.status, added.arguments], ['function_call', 'in_progress', '']);
    const deltas = events.filter((e) => e.event === 'response.function_call_arguments.delta' && e.data.output_index === output_index);
    t.ok(deltas.length >= 2 && deltas.every((e) => e.data.item_id === added.id));
    t.equal(deltas.map((e) => e.data.delta).join(''), args);
  }
});

t.test('Responses stream through the SDK: responses.stream accumulates both calls', async (t) => {
  const stream = client.responses.stream({ model: 'gpt-5', input: ask, tools: responsesTools });
  const final = await stream.finalResponse();
  t.same(final.output.map((item) => (item.type === 'function_call' ? [item.name, item.arguments] : item.type)), [['get_weather', args], ['get_time', args]]);
  const single = await client.responses.create({ model: 'gpt-5', input: ask, tools: responsesTools, parallel_tool_calls: false });
  t.equal(single.output.length, 1, 'parallel_tool_calls false: one call');
});

t.test('the tool results round trip: both answered, the model reports them', async (t) => {
  const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }], tools: chatTools });
  const message = first.choices[0].message;
  const results = message.tool_calls!.map((c, i) => ({ role: 'tool' as const, tool_call_id: c.id, content: `result ${i}` }));
  const second = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ask }, message, ...results], tools: chatTools });
  t.equal(second.choices[0].message.content, 'Tool result: result 1');
});
