// OpenAI Responses on the simulator: objects, exact usage, event streams, previous_response_id chains and faults.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { AUTH, eventsOf, postJson, readToCut } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const question = 'Hello, world! How are you today?';
const answer = 'Echo: Hello, world! How are you today?';
// By hand: "Be brief." = Be|brief|. = 3; the question = Hello|,|world|!|How|are|you|today|? = 9.
// input = (3 + 3) + (3 + 9) + 3 = 21; the answer = Echo|:|Hello|,|world|!|How|are|you|today|? = 11.
const usage = (input: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});
const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { input: { type: 'string' } } } }];
const args = '{"input":"Weather in Paris?"}';
const fault = (value: string) => ({ 'x-simulator-fault': value });

async function create(body: object, headers: Record<string, string> = {}) {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', ...body }, headers);
  return { status: res.status, body: await res.json() };
}

t.test('non-stream create: the response object with exact usage', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: question, instructions: 'Be brief.' });
  t.equal(res.status, 200);
  const body = await res.json();
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  t.type(body.created_at, 'number');
  t.type(body.completed_at, 'number');
  t.same({ ...body, created_at: 0, completed_at: 0 }, {
    id: `resp_sim_${n}`,
    object: 'response',
    created_at: 0,
    status: 'completed',
    completed_at: 0,
    error: null,
    incomplete_details: null,
    instructions: 'Be brief.',
    max_output_tokens: null,
    model: 'gpt-5',
    output: [{
      id: `msg_sim_${n}`, type: 'message', status: 'completed', role: 'assistant',
      content: [{ type: 'output_text', text: answer, annotations: [], logprobs: [] }],
    }],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: usage(21, 11),
    user: null,
    metadata: {},
  });
  t.strictSame(Object.keys(body), ['id', 'object', 'created_at', 'status', 'completed_at', 'error', 'incomplete_details', 'instructions',
    'max_output_tokens', 'model', 'output', 'parallel_tool_calls', 'previous_response_id', 'reasoning', 'store', 'temperature', 'text',
    'tool_choice', 'tools', 'top_p', 'truncation', 'usage', 'user', 'metadata']);
});

t.test('input as message items, with input_text parts and a function_call_output', async (t) => {
  const input = [
    { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: args },
    { type: 'function_call_output', call_id: 'call_1', output: '{"temp_c":21}' },
  ];
  const { body } = await create({ input, tools });
  // By hand: (3 + 4) + (3 + 0: arguments do not count) + (3 + 9: {|"|temp|_|c|"|:|21|}) + 3 = 25;
  // reply "Tool result: {"temp_c":21}" = Tool|result|: + 9 = 12.
  t.equal(body.output[0].content[0].text, 'Tool result: {"temp_c":21}');
  t.same(body.usage, usage(25, 12));
  const plain = await create({ input: [{ role: 'user', content: 'Weather in Paris?' }] });
  t.equal(plain.body.output[0].content[0].text, 'Echo: Weather in Paris?');
  // Echo|:|Weather|in|Paris|? = 6.
  t.same(plain.body.usage, usage(10, 6));
});

t.test('stream: the canonical event sequence, contiguous sequence numbers, usage on response.completed', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: question, instructions: 'Be brief.', stream: true });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.equal(res.headers.get('cache-control'), 'no-cache');
  const text = await res.text();
  t.notMatch(text, /\[DONE\]/);
  const events = eventsOf(text);
  t.same(events.map((e) => e.event), [
    'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
    ...Array(11).fill('response.output_text.delta'),
    'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
  ]);
  t.same(events.map((e) => e.data.sequence_number), events.map((_, i) => i), 'sequence_number 0..n-1');
  t.ok(events.every((e) => e.data.type === e.event), 'data.type repeats the event name');
  t.ok(events.every((e) => Object.keys(e.data).slice(0, 2).join() === 'type,sequence_number'));

  const [created, inProgress, added, partAdded] = events.map((e) => e.data);
  const id = created.response.id;
  const itemId = added.item.id;
  for (const early of [created, inProgress]) {
    t.equal(early.response.status, 'in_progress');
    t.same(early.response.output, []);
    t.equal(early.response.usage, null);
  }
  t.same(added, { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
  t.same(partAdded, { type: 'response.content_part.added', sequence_number: 3, item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
  const deltas = events.slice(4, 15).map((e) => e.data);
  for (const delta of deltas) {
    t.same(Object.keys(delta), ['type', 'sequence_number', 'item_id', 'output_index', 'content_index', 'delta', 'logprobs', 'obfuscation']);
    t.same([delta.item_id, delta.output_index, delta.content_index], [itemId, 0, 0]);
  }
  t.equal(deltas.map((d) => d.delta).join(''), answer);
  const [textDone, partDone, itemDone, completed] = events.slice(15).map((e) => e.data);
  t.same(textDone, { type: 'response.output_text.done', sequence_number: 15, item_id: itemId, output_index: 0, content_index: 0, text: answer, logprobs: [] });
  t.same(partDone, { type: 'response.content_part.done', sequence_number: 16, item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: answer, annotations: [], logprobs: [] } });
  t.same(itemDone, { type: 'response.output_item.done', sequence_number: 17, output_index: 0, item: { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: answer, annotations: [] }] } });
  t.equal(completed.response.id, id);
  t.equal(completed.response.status, 'completed');
  t.same(completed.response.usage, usage(21, 11));
  t.same(completed.response.output, [{ id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: answer, annotations: [], logprobs: [] }] }]);

  const stored = await fetch(`${sim.url}/v1/responses/${id}`, { headers: AUTH });
  t.same(await stored.json(), completed.response, 'a streamed response is stored as the terminal event shows it');
});

t.test('include_obfuscation false drops the obfuscation field', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: 'a b', stream: true, stream_options: { include_obfuscation: false } });
  const deltas = eventsOf(await res.text()).filter((e) => e.event === 'response.output_text.delta');
  t.equal(deltas.length, 4);
  t.ok(deltas.every((e) => !('obfuscation' in e.data)));
});

t.test('max_output_tokens below the reply: status incomplete, and response.incomplete in streams', async (t) => {
  const { body } = await create({ input: question, max_output_tokens: 5 });
  t.equal(body.status, 'incomplete');
  t.same(body.incomplete_details, { reason: 'max_output_tokens' });
  t.equal(body.completed_at, null);
  t.equal(body.max_output_tokens, 5);
  t.equal(body.output[0].status, 'incomplete');
  t.equal(body.output[0].content[0].text, 'Echo: Hello, world');
  t.same(body.usage, usage(15, 5));

  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: question, max_output_tokens: 5, stream: true });
  const events = eventsOf(await res.text());
  const last = events[events.length - 1];
  t.equal(last.event, 'response.incomplete');
  t.equal(last.data.response.status, 'incomplete');
  t.same(last.data.response.incomplete_details, { reason: 'max_output_tokens' });
  t.same(last.data.response.usage, usage(15, 5));
  t.equal(events.filter((e) => e.event === 'response.output_text.delta').length, 5);
  t.notOk(events.some((e) => e.event === 'response.completed'));
});

t.test('function tools: a function_call item, whole and streamed', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: 'Weather in Paris?', tools });
  const body = await res.json();
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  // By hand: input (3 + 4) + 3 = 10; arguments {|"|input|"|:|"|Weather|in|Paris|?|"|} = 12.
  t.same(body.output, [{ id: `fc_sim_${n}`, type: 'function_call', status: 'completed', call_id: `call_sim_${n}`, name: 'get_weather', arguments: args }]);
  t.same(body.usage, usage(10, 12));
  t.same(body.tools, tools);

  const none = await create({ input: 'Weather in Paris?', tools, tool_choice: 'none' });
  t.equal(none.body.output[0].type, 'message');
  const named = await create({ input: 'x', tools: [...tools, { type: 'function', name: 'get_time' }], tool_choice: { type: 'function', name: 'get_time' } });
  t.equal(named.body.output[0].name, 'get_time');

  const stream = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: 'Weather in Paris?', tools, stream: true });
  const events = eventsOf(await stream.text());
  t.same(events.map((e) => e.event), [
    'response.created', 'response.in_progress', 'response.output_item.added',
    'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta',
    'response.function_call_arguments.done', 'response.output_item.done', 'response.completed',
  ]);
  t.same(events.map((e) => e.data.sequence_number), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  const added = events[2].data.item;
  t.same(Object.keys(added), ['id', 'type', 'status', 'arguments', 'call_id', 'name']);
  t.same([added.type, added.status, added.arguments, added.name], ['function_call', 'in_progress', '', 'get_weather']);
  const deltas = events.slice(3, 6).map((e) => e.data);
  t.ok(deltas.every((d) => d.item_id === added.id && d.output_index === 0 && typeof d.obfuscation === 'string'));
  t.equal(deltas.map((d) => d.delta).join(''), args);
  t.same(events[6].data, { type: 'response.function_call_arguments.done', sequence_number: 6, item_id: added.id, output_index: 0, name: 'get_weather', arguments: args });
  t.same(events[7].data.item, { id: added.id, type: 'function_call', status: 'completed', call_id: added.call_id, name: 'get_weather', arguments: args });
  t.same(events[8].data.response.usage, usage(10, 12));
});

t.test('previous_response_id chains, per credential', async (t) => {
  const own = { authorization: 'Bearer sk-account-a' };
  const other = { authorization: 'Bearer sk-account-b' };
  // By hand: "My name is Bob." = My|name|is|Bob|. = 5 → input 3 + 5 + 3 = 11; reply Echo|:|My|name|is|Bob|. = 7.
  const first = await create({ input: 'My name is Bob.' }, own);
  t.same(first.body.usage, usage(11, 7));
  // Chained: the previous input + output (18) + this request's own (3 + What|is|my|name|? 5 + 3 = 11) = 29.
  const second = await create({ input: 'What is my name?', previous_response_id: first.body.id }, own);
  t.equal(second.status, 200);
  t.equal(second.body.previous_response_id, first.body.id);
  t.same(second.body.usage, usage(29, 7));
  // Two links: 29 + 7 + (3 + And|again|? 3 + 3 = 9) = 45.
  const third = await create({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'And again?' }] }], previous_response_id: second.body.id }, own);
  t.same(third.body.usage, usage(45, 5));

  const got = await fetch(`${sim.url}/v1/responses/${second.body.id}`, { headers: own });
  t.equal(got.status, 200);
  t.same(await got.json(), second.body);

  const foreign = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: 'hi', previous_response_id: first.body.id }, other);
  t.equal(foreign.status, 400);
  t.same(await foreign.json(), { error: {
    message: `Previous response with id '${first.body.id}' not found.`, type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found',
  } });
  const foreignGet = await fetch(`${sim.url}/v1/responses/${first.body.id}`, { headers: other });
  t.equal(foreignGet.status, 404);

  const unknown = await create({ input: 'hi', previous_response_id: 'resp_nope' }, own);
  t.equal(unknown.status, 400);
  t.same(unknown.body, { error: { message: "Previous response with id 'resp_nope' not found.", type: 'invalid_request_error', param: 'previous_response_id', code: 'previous_response_not_found' } });
});

t.test('a function_call_output chained onto a tool call is reported back', async (t) => {
  const call = await create({ input: 'Weather in Paris?', tools });
  const callId = call.body.output[0].call_id;
  const result = await create({ previous_response_id: call.body.id, tools, input: [{ type: 'function_call_output', call_id: callId, output: '{"temp_c":21}' }] });
  t.equal(result.body.output[0].content[0].text, 'Tool result: {"temp_c":21}');
  // By hand: previous 10 + 12 = 22, plus (3 + 9) + 3 = 37.
  t.same(result.body.usage, usage(37, 12));
});

t.test('store:false keeps the response out of GET and chains', async (t) => {
  const { body } = await create({ input: 'hi', store: false });
  t.equal(body.store, false);
  t.equal((await fetch(`${sim.url}/v1/responses/${body.id}`, { headers: AUTH })).status, 404);
  t.equal((await create({ input: 'hi', previous_response_id: body.id })).status, 400);
});

t.test('GET of an unknown id is a 404 OpenAI envelope; other paths under /v1/responses are 404', async (t) => {
  const res = await fetch(`${sim.url}/v1/responses/resp_missing`, { headers: AUTH });
  t.equal(res.status, 404);
  t.same(await res.json(), { error: { message: "Response with id 'resp_missing' not found.", type: 'invalid_request_error', param: null, code: null } });
  for (const [method, path] of [['POST', '/v1/responses/resp_1/cancel'], ['GET', '/v1/responses/resp_1/input_items'], ['POST', '/v1/responses/compact'], ['DELETE', '/v1/responses/resp_1']]) {
    const other = await fetch(sim.url + path, { method, headers: AUTH });
    t.equal(other.status, 404, `${method} ${path}`);
    t.equal((await other.json()).error.type, 'invalid_request_error');
  }
});

t.test('POST /v1/responses/input_tokens counts as create would', async (t) => {
  const res = await postJson(sim, '/v1/responses/input_tokens', { model: 'gpt-5', input: question, instructions: 'Be brief.' });
  t.equal(res.status, 200);
  t.same(await res.json(), { object: 'response.input_tokens', input_tokens: 21 });
  const first = await create({ input: 'My name is Bob.' });
  const chained = await postJson(sim, '/v1/responses/input_tokens', { input: 'What is my name?', previous_response_id: first.body.id });
  t.same(await chained.json(), { object: 'response.input_tokens', input_tokens: 29 });
});

t.test('bad requests get a 400 OpenAI envelope naming the parameter', async (t) => {
  const cases: Array<[object | string, string | null]> = [
    ['{"model":', null],
    [{ input: 'hi' }, 'model'],
    [{ model: 'gpt-5', input: 42 }, 'input'],
    [{ model: 'gpt-5', input: 'hi', max_output_tokens: 0 }, 'max_output_tokens'],
  ];
  for (const [body, param] of cases) {
    const res = await postJson(sim, '/v1/responses', body);
    t.equal(res.status, 400, JSON.stringify(body));
    const { error } = await res.json();
    t.equal(error.type, 'invalid_request_error');
    t.equal(error.param, param);
  }
});

t.test('status faults answer with the OpenAI envelope', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: 'hi', stream: true }, fault('status=429'));
  t.equal(res.status, 429);
  t.equal(res.headers.get('retry-after'), '1');
  t.same(await res.json(), { error: { message: 'Simulated upstream error (status 429).', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
});

t.test('midstream-error: two deltas, then response.failed with the next sequence number, and nothing more', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: question, stream: true }, fault('midstream-error'));
  const events = eventsOf(await res.text());
  t.same(events.map((e) => e.event), [
    'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
    'response.output_text.delta', 'response.output_text.delta', 'response.failed',
  ]);
  t.same(events.map((e) => e.data.sequence_number), [0, 1, 2, 3, 4, 5, 6]);
  const failed = events[6].data.response;
  t.equal(failed.status, 'failed');
  t.same(failed.error, { code: 'server_error', message: 'simulated mid-stream failure' });
  // Billed: the input (3 + 9 + 3 = 15) and the two streamed tokens "Echo", ":".
  t.same(failed.usage, usage(15, 2));
  t.equal((await fetch(`${sim.url}/v1/responses/${failed.id}`, { headers: AUTH })).status, 404, 'a failed stream is not stored');

  const tool = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: 'Weather in Paris?', tools, stream: true }, fault('midstream-error'));
  const toolEvents = eventsOf(await tool.text());
  t.same(toolEvents.map((e) => e.event).slice(3), ['response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.failed']);
  t.equal(toolEvents[5].data.sequence_number, 5);
});

t.test('truncate: two deltas, then the connection drops without a terminal event', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: question, stream: true }, fault('truncate'));
  const { text, failed } = await readToCut(res);
  t.ok(failed, 'the body ends in a network error');
  const events = eventsOf(text);
  t.equal(events.length, 6);
  t.same(events.slice(4).map((e) => e.data.delta), ['Echo', ':']);
  t.notMatch(text, /response\.(completed|failed|incomplete)/);
});

t.test('the store keeps only the newest responses', async (t) => {
  const small = await startSimulator({ maxStoredResponses: 2 });
  t.teardown(() => small.close());
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await (await postJson(small, '/v1/responses', { model: 'gpt-5', input: `turn ${i}` })).json()).id);
  const statuses = await Promise.all(ids.map(async (id) => (await fetch(`${small.url}/v1/responses/${id}`, { headers: AUTH })).status));
  t.same(statuses, [404, 200, 200]);
});
