// Anthropic Messages on the simulator: the Message shape, exact usage, the §5.4 event stream, tools, models and faults.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { eventsOf, postJson, readToCut } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const HEADERS = { 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' };
const question = 'Hello, world! How are you today?';
const answer = 'Echo: Hello, world! How are you today?';
// By hand: system "Be brief." = Be|brief|. = 3; the question = Hello|,|world|!|How|are|you|today|? = 9.
// input = (3 + 3) + (3 + 9) + 3 = 21; the answer = Echo|:|Hello|,|world|!|How|are|you|today|? = 11.
const base = { model: 'claude-sonnet-4-5', max_tokens: 1024, system: 'Be brief.', messages: [{ role: 'user', content: question }] };
const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { input: { type: 'string' } } } }];
const fault = (value: string) => ({ ...HEADERS, 'x-simulator-fault': value });

function post(body: unknown, headers: Record<string, string> = HEADERS, path = '/v1/messages'): Promise<Response> {
  // postJson adds a Bearer credential; x-api-key alone is tested separately below.
  return postJson(sim, path, body, headers);
}

t.test('non-stream: the Message shape with exact usage', async (t) => {
  const res = await post(base);
  t.equal(res.status, 200);
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  t.equal(res.headers.get('request-id'), `req_sim_${n}`);
  t.same(await res.json(), {
    id: `msg_sim_${n}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: answer, citations: null }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: 21,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: 11,
      service_tier: 'standard',
    },
  });
});

t.test('system as blocks, content as blocks, and ?beta=true', async (t) => {
  const body = { ...base, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: question }] }] };
  const res = await post(body, HEADERS, '/v1/messages?beta=true');
  t.equal(res.status, 200);
  const message = await res.json();
  t.equal(message.content[0].text, answer);
  t.equal(message.usage.input_tokens, 21);
});

t.test('max_tokens below the reply: stop_reason max_tokens', async (t) => {
  const message = await (await post({ ...base, max_tokens: 5 })).json();
  t.equal(message.content[0].text, 'Echo: Hello, world');
  t.equal(message.stop_reason, 'max_tokens');
  t.equal(message.usage.output_tokens, 5);
});

t.test('stream: the §5.4 event sequence, message_start usage then cumulative message_delta usage', async (t) => {
  const res = await post({ ...base, stream: true });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const text = await res.text();
  t.notMatch(text, /\[DONE\]/);
  const events = eventsOf(text);
  t.same(events.map((e) => e.event), [
    'message_start', 'content_block_start', 'ping', ...Array(11).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop',
  ]);
  t.ok(events.every((e) => e.data.type === e.event), 'data.type equals the event name');
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  t.same(events[0].data, {
    type: 'message_start',
    message: {
      id: `msg_sim_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: 21, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: 'standard' },
    },
  });
  t.same(events[1].data, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  t.equal(events[2].raw, 'event: ping\ndata: {"type": "ping"}');
  const deltas = events.slice(3, 14).map((e) => e.data);
  t.ok(deltas.every((d) => d.index === 0 && d.delta.type === 'text_delta'));
  t.equal(deltas.map((d) => d.delta.text).join(''), answer);
  t.same(events[14].data, { type: 'content_block_stop', index: 0 });
  t.same(events[15].data, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 11 } });
  t.same(events[16].data, { type: 'message_stop' });
});

t.test('tools: a tool_use block, whole and streamed with input_json_delta', async (t) => {
  const body = { ...base, system: undefined, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] };
  const res = await post(body);
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  const message = await res.json();
  // By hand: input (3 + Weather|in|Paris|? 4) + 3 = 10; input JSON {|"|input|"|:|"|Weather|in|Paris|?|"|} = 12.
  t.same(message.content, [{ type: 'tool_use', id: `toolu_sim_${n}`, name: 'get_weather', input: { input: 'Weather in Paris?' } }]);
  t.equal(message.stop_reason, 'tool_use');
  t.same([message.usage.input_tokens, message.usage.output_tokens], [10, 12]);

  const stream = await post({ ...body, stream: true });
  const sn = stream.headers.get('x-request-id')!.slice('req_sim_'.length);
  const events = eventsOf(await stream.text());
  t.same(events.map((e) => e.event), [
    'message_start', 'content_block_start', 'ping', ...Array(4).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop',
  ]);
  t.same(events[1].data.content_block, { type: 'tool_use', id: `toolu_sim_${sn}`, name: 'get_weather', input: {} });
  const fragments = events.slice(3, 7).map((e) => e.data.delta);
  t.ok(fragments.every((d) => d.type === 'input_json_delta'));
  t.equal(fragments[0].partial_json, '', 'the first fragment is empty, as the real service sends it');
  t.same(JSON.parse(fragments.map((d) => d.partial_json).join('')), { input: 'Weather in Paris?' });
  t.same(events[8].data.delta, { stop_reason: 'tool_use', stop_sequence: null });
  t.same(events[8].data.usage, { output_tokens: 12 });

  const none = await (await post({ ...body, tool_choice: { type: 'none' } })).json();
  t.equal(none.content[0].type, 'text');
  const named = await (await post({ ...body, tools: [...tools, { name: 'get_time', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'get_time' } })).json();
  t.equal(named.content[0].name, 'get_time');
  const serverTool = await (await post({ ...body, tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).json();
  t.equal(serverTool.content[0].type, 'text', 'server tools are never called');
});

t.test('a tool_result turn is reported back, its text counted as input', async (t) => {
  const messages = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { input: 'Weather in Paris?' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"temp_c":21}' }] },
  ];
  const message = await (await post({ ...base, system: undefined, tools, messages })).json();
  t.same(message.content, [{ type: 'text', text: 'Tool result: {"temp_c":21}', citations: null }]);
  // By hand: (3 + 4) + (3 + 0) + (3 + {|"|temp|_|c|"|:|21|} 9) + 3 = 25; reply Tool|result|: + 9 = 12.
  t.same([message.usage.input_tokens, message.usage.output_tokens], [25, 12]);
  const blocks = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '{"temp_c":21}' }] }] }];
  const fromBlocks = await (await post({ ...base, system: undefined, tools, messages: [...messages.slice(0, 2), ...blocks] })).json();
  t.equal(fromBlocks.content[0].text, 'Tool result: {"temp_c":21}');
});

t.test('POST /v1/messages/count_tokens counts as create would', async (t) => {
  for (const path of ['/v1/messages/count_tokens', '/v1/messages/count_tokens?beta=true']) {
    const res = await post({ model: base.model, system: base.system, messages: base.messages }, HEADERS, path);
    t.equal(res.status, 200, path);
    t.same(await res.json(), { input_tokens: 21 });
  }
});

t.test('anthropic-version is required on messages and count_tokens', async (t) => {
  const expected = { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } };
  for (const path of ['/v1/messages', '/v1/messages?beta=true', '/v1/messages/count_tokens']) {
    const res = await post(base, { 'x-api-key': 'sk-ant-upstream' }, path);
    t.equal(res.status, 400, path);
    t.same(await res.json(), expected, path);
  }
});

t.test('credentials: x-api-key or Bearer; missing or bad is a 401 authentication_error', async (t) => {
  const bare = (headers: Record<string, string>) => fetch(sim.url + '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(base) });
  t.equal((await bare({ 'x-api-key': 'k', 'anthropic-version': '2023-06-01' })).status, 200);
  t.equal((await bare({ authorization: 'Bearer k', 'anthropic-version': '2023-06-01' })).status, 200);
  const bad = await bare({ 'x-api-key': 'sim-bad-credential', 'anthropic-version': '2023-06-01' });
  t.equal(bad.status, 401);
  t.same(await bad.json(), { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
  const missing = await bare({ 'anthropic-version': '2023-06-01' });
  t.equal(missing.status, 401);
  t.equal((await missing.json()).error.type, 'authentication_error');
});

t.test('bad bodies are a 400 invalid_request_error', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['{"model":', 'The request body is not valid JSON.'],
    [{ ...base, max_tokens: undefined }, 'max_tokens: Field required'],
    [{ ...base, max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1'],
    [{ ...base, model: undefined }, 'model: Field required'],
    [{ ...base, messages: undefined }, 'messages: Field required'],
  ];
  for (const [body, message] of cases) {
    const res = await post(body);
    t.equal(res.status, 400, message);
    t.same(await res.json(), { type: 'error', error: { type: 'invalid_request_error', message } });
  }
});

t.test('GET /v1/models with anthropic-version: the Anthropic list shape; without it, OpenAI', async (t) => {
  const res = await fetch(sim.url + '/v1/models', { headers: HEADERS });
  t.equal(res.status, 200);
  t.same(await res.json(), {
    data: [
      { type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z' },
      { type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
      { type: 'model', id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' },
    ],
    has_more: false,
    first_id: 'claude-haiku-4-5',
    last_id: 'claude-opus-4-1',
  });
  const page = await (await fetch(sim.url + '/v1/models?limit=2', { headers: HEADERS })).json();
  t.same([page.data.length, page.has_more, page.last_id], [2, true, 'claude-sonnet-4-5']);
  const next = await (await fetch(sim.url + '/v1/models?limit=2&after_id=claude-sonnet-4-5', { headers: HEADERS })).json();
  t.same([next.data.map((m: { id: string }) => m.id), next.has_more], [['claude-opus-4-1'], false]);

  const openai = await (await fetch(sim.url + '/v1/models', { headers: { authorization: 'Bearer k' } })).json();
  t.equal(openai.object, 'list');

  const one = await fetch(sim.url + '/v1/models/claude-opus-4-1', { headers: HEADERS });
  t.same(await one.json(), { type: 'model', id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' });
  const missing = await fetch(sim.url + '/v1/models/claude-nope', { headers: HEADERS });
  t.equal(missing.status, 404);
  t.same(await missing.json(), { type: 'error', error: { type: 'not_found_error', message: 'model: claude-nope' } });
  const unauth = await fetch(sim.url + '/v1/models', { headers: { 'anthropic-version': '2023-06-01' } });
  t.equal(unauth.status, 401);
  t.equal((await unauth.json()).type, 'error');
});

t.test('status faults answer with the Anthropic envelope', async (t) => {
  const expected: Record<number, string> = { 429: 'rate_limit_error', 529: 'overloaded_error', 500: 'api_error', 400: 'invalid_request_error', 404: 'not_found_error' };
  for (const [status, type] of Object.entries(expected)) {
    const res = await post({ ...base, stream: true }, fault(`status=${status}`));
    t.equal(res.status, Number(status));
    t.equal(res.headers.get('retry-after'), status === '429' ? '1' : null);
    t.same(await res.json(), { type: 'error', error: { type, message: `Simulated upstream error (status ${status}).` } });
  }
});

t.test('midstream-error: two deltas, then event: error, and no message_stop', async (t) => {
  const res = await post({ ...base, stream: true }, fault('midstream-error'));
  t.equal(res.status, 200);
  const text = await res.text();
  const events = eventsOf(text);
  t.same(events.map((e) => e.event), ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'error']);
  t.same(events.slice(3, 5).map((e) => e.data.delta.text), ['Echo', ':']);
  t.ok(text.endsWith('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'));
});

t.test('truncate: two deltas, then the connection drops', async (t) => {
  const res = await post({ ...base, stream: true }, fault('truncate'));
  const { text, failed } = await readToCut(res);
  t.ok(failed);
  t.same(eventsOf(text).map((e) => e.event), ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta']);
});
