// End to end with the official `@anthropic-ai/sdk` on the shipped gateway.yaml: Messages (whole, streamed, tools),
// count_tokens, the Anthropic model list, the /antigravity dedicated entries, mid-stream failures, beta pass-through,
// and that the client key never reaches either upstream.
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_ACCOUNT, DEMO_KEY, logLine, rejection, rid, sentCredential, SHIPPED_CONFIG, surfaces, usage } from '../helpers/e2e.ts';

const { gateway, requests } = await withLoggedGateway(t, SHIPPED_CONFIG);
const sim = gateway.simulators.demo;
const agSim = gateway.simulators['demo-antigravity'];
// The client records the headers it sends, so pass-through can be compared with what the SDK itself put on the wire.
const sentHeaders: Headers[] = [];
const client = new Anthropic({
  apiKey: DEMO_KEY, baseURL: gateway.url, maxRetries: 0,
  fetch: (url: string | URL | Request, init?: RequestInit) => {
    const request = new Request(url, init);
    sentHeaders.push(request.headers);
    return fetch(request);
  },
});
const antigravity = new Anthropic({ apiKey: DEMO_KEY, baseURL: gateway.url + '/antigravity', maxRetries: 0 });
const last = () => sim.requests[sim.requests.length - 1];
const agLast = () => agSim.requests[agSim.requests.length - 1];
const withId = (id: string, extra: Record<string, string> = {}) => ({ headers: { 'x-request-id': id, ...extra } });

// Simulator (Messages): input = Σ over the system prompt and each message of (3 + tokens) + 3; cache counters are 0.
// "Be brief." = 3 tokens, "What is 2 + 2?" = 6 → input 3 + 6 + 9 = 18; reply "Echo: What is 2 + 2?" = 8 tokens.
// claude-haiku-4-5: the SDK warns on every request naming claude-sonnet-4-5 (deprecated).
const MODEL = 'claude-haiku-4-5';
const SYSTEM = 'Be brief.';
const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is 2 + 2?' }];
const REPLY = 'Echo: What is 2 + 2?';
const BODY_USAGE = {
  input_tokens: 18, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 8, service_tier: 'standard',
};
// A stream's usage: message_start's (output_tokens 1), overwritten field by field by message_delta's output_tokens.
const STREAM_USAGE = { input_tokens: 18, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 8, service_tier: 'standard' };

const textOf = (message: Anthropic.Message) => message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');

t.test('messages.create non-stream: reply and exact usage, on the SDK object and in the log', async (t) => {
  const id = rid('msg');
  const { data: message, response } = await client.messages.create({ model: MODEL, max_tokens: 100, system: SYSTEM, messages }, withId(id)).withResponse();
  t.equal(message.type, 'message');
  t.equal(message.role, 'assistant');
  t.equal(message.model, MODEL);
  t.equal(textOf(message), REPLY);
  t.equal(message.stop_reason, 'end_turn');
  t.same(message.usage, BODY_USAGE);
  t.equal(response.headers.get('x-client-request-id'), id, 'the client\'s own request id is echoed');
  t.match(response.headers.get('request-id'), /^[0-9a-f-]{36}$/, 'request-id, which the SDK reads, is the gateway\'s own id');
  t.equal(response.headers.get('request-id'), response.headers.get('x-request-id'));
  t.match(response.headers.get('x-upstream-request-id'), /^req_sim_\d+$/, 'the upstream\'s own id is relayed under a name of its own');
  t.equal(last().path, '/v1/messages');
  t.match(sentHeaders.at(-1)!.get('anthropic-version'), /^\d{4}-\d{2}-\d{2}$/);
  t.equal(last().headers['anthropic-version'], sentHeaders.at(-1)!.get('anthropic-version'), 'anthropic-version as the SDK sent it');
  t.same(last().json, { model: MODEL, max_tokens: 100, system: SYSTEM, messages }, 'the body went upstream unchanged');
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/messages');
  t.equal(line.outcome, 'completed');
  t.equal(line.model, MODEL);
  t.same(line.usage, usage(18, 8));
});

t.test('messages.stream().finalMessage(): events in order, exact final usage', async (t) => {
  const id = rid('msg-stream');
  const stream = client.messages.stream({ model: MODEL, max_tokens: 100, system: SYSTEM, messages }, withId(id));
  const types: string[] = [];
  const texts: string[] = [];
  stream.on('streamEvent', (event) => types.push(event.type));
  stream.on('text', (delta) => texts.push(delta));
  const message = await stream.finalMessage();
  t.equal(textOf(message), REPLY);
  // "Echo: What is 2 + 2?" streams a token per delta: Echo|:| What| is| 2| +| 2|?
  t.same(texts, ['Echo', ':', ' What', ' is', ' 2', ' +', ' 2', '?']);
  t.same(types, ['message_start', 'content_block_start', ...texts.map(() => 'content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop'],
    'ping is not surfaced; every other event arrives in order');
  t.equal(message.stop_reason, 'end_turn');
  t.same(message.usage, STREAM_USAGE);
  t.equal((last().json as { stream: boolean }).stream, true);
  const line = await logLine(requests, id);
  t.equal(line.stream, true);
  t.equal(line.outcome, 'completed');
  t.same(line.usage, usage(18, 8), 'message_delta overwrote message_start\'s output_tokens 1, never added to it');
});

// "Weather in Paris?" = Weather|in|Paris|? = 4 tokens → input 3 + 7 = 10. The tool input {"input":"Weather in Paris?"}
// is {|"|input|"|:|"|Weather|in|Paris|?|"|} = 12 output tokens.
const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { input: { type: 'string' } } } }];
const toolQuestion: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];

t.test('tool use: non-stream, streamed (input_json_delta reassembled), and the tool result turn', async (t) => {
  const id = rid('msg-tool');
  const message = await client.messages.create({ model: MODEL, max_tokens: 100, messages: toolQuestion, tools }, withId(id));
  t.equal(message.stop_reason, 'tool_use');
  t.equal(message.content.length, 1);
  const call = message.content[0] as Anthropic.ToolUseBlock;
  t.equal(call.type, 'tool_use');
  t.equal(call.name, 'get_weather');
  t.match(call.id, /^toolu_sim_\d+$/);
  t.same(call.input, { input: 'Weather in Paris?' });
  t.same({ in: message.usage.input_tokens, out: message.usage.output_tokens }, { in: 10, out: 12 });
  t.same((last().json as { tools: unknown }).tools, tools, 'tools forwarded untouched');
  t.same((await logLine(requests, id)).usage, usage(10, 12));

  const streamId = rid('msg-tool-stream');
  const jsons: string[] = [];
  const stream = client.messages.stream({ model: MODEL, max_tokens: 100, messages: toolQuestion, tools }, withId(streamId));
  stream.on('inputJson', (partial) => jsons.push(partial));
  const streamed = await stream.finalMessage();
  t.equal(streamed.stop_reason, 'tool_use');
  t.same((streamed.content[0] as Anthropic.ToolUseBlock).input, { input: 'Weather in Paris?' });
  t.equal(jsons.join(''), '{"input":"Weather in Paris?"}', 'the fragments concatenate to the tool input');
  t.same(streamed.usage.output_tokens, 12);
  t.same((await logLine(requests, streamId)).usage, usage(10, 12));

  // Tool result turn: user 4 tokens → 7, assistant tool_use counts nothing → 3, tool_result "Sunny" 1 token → 4; + 3 = 17.
  // Reply "Tool result: Sunny" = Tool|result|:|Sunny = 4 tokens.
  const resultId = rid('msg-tool-result');
  const answer = await client.messages.create({
    model: MODEL, max_tokens: 100, tools,
    messages: [...toolQuestion, { role: 'assistant', content: [call] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny' }] }],
  }, withId(resultId));
  t.equal(textOf(answer), 'Tool result: Sunny');
  t.same({ in: answer.usage.input_tokens, out: answer.usage.output_tokens }, { in: 17, out: 4 });
  t.same((await logLine(requests, resultId)).usage, usage(17, 4));
});

t.test('messages.countTokens', async (t) => {
  const id = rid('msg-count');
  const counted = await client.messages.countTokens({ model: MODEL, system: SYSTEM, messages }, withId(id));
  t.same(counted, { input_tokens: 18 });
  t.equal(last().path, '/v1/messages/count_tokens');
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/messages/count_tokens');
  t.equal(line.status, 200);
  t.equal(line.model, MODEL);
});

const ANTHROPIC_MODEL = (id: string) => ({ type: 'model', id, display_name: id, created_at: '2024-01-01T00:00:00Z' });

t.test('models.list: Anthropic shape (chosen by the anthropic-version header), only Anthropic\'s models the key may use', async (t) => {
  const ids: string[] = [];
  const page = await client.models.list();
  for await (const model of page) ids.push(model.id);
  // The demo platform serves every vendor: this list shows the upstream's Anthropic list (claude-* matches all three),
  // not the group's OpenAI and Gemini models.
  t.same(ids, ['claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4-5']);
  t.same(page.data[2], ANTHROPIC_MODEL('claude-sonnet-4-5'));
  t.equal(page.has_more, false);
  t.equal(page.first_id, 'claude-haiku-4-5');
  t.equal(page.last_id, 'claude-sonnet-4-5');
  const before = sim.requests.length;
  const one = await client.models.retrieve('claude-sonnet-4-5');
  t.same(one, ANTHROPIC_MODEL('claude-sonnet-4-5'), 'GET /v1/models/{model} in Anthropic shape too');
  t.same(await client.models.retrieve('claude-opus-4-1'), ANTHROPIC_MODEL('claude-opus-4-1'), 'a model allowed only by the claude-* glob can be looked up');
  const missing = await rejection(client.models.retrieve('gpt-3.5-turbo'));
  t.ok(missing instanceof Anthropic.NotFoundError);
  for await (const model of client.models.list()) void model;
  t.equal(sim.requests.length, before, 'lookups and a warm list are answered by the gateway itself');
});

t.test('the /antigravity base URL: create, stream, countTokens and models go to the dedicated pool only', async (t) => {
  const before = sim.requests.length;
  agSim.clear();

  const id = rid('ag-msg');
  const message = await antigravity.messages.create({ model: MODEL, max_tokens: 100, system: SYSTEM, messages }, withId(id));
  t.equal(textOf(message), REPLY);
  t.same(message.usage, BODY_USAGE);
  t.equal(agLast().path, '/v1/messages');
  const line = await logLine(requests, id);
  t.equal(line.route, '/antigravity/v1/messages');
  t.equal(line.group, 'demo-antigravity');
  t.equal(line.account, 'demo-ag-1');
  t.same(line.usage, usage(18, 8));

  const streamId = rid('ag-stream');
  const streamed = await antigravity.messages.stream({ model: MODEL, max_tokens: 100, system: SYSTEM, messages }, withId(streamId)).finalMessage();
  t.equal(textOf(streamed), REPLY);
  t.same(streamed.usage, STREAM_USAGE);
  t.equal(agLast().path, '/v1/messages');
  t.same((await logLine(requests, streamId)).usage, usage(18, 8));

  const countId = rid('ag-count');
  t.same(await antigravity.messages.countTokens({ model: MODEL, system: SYSTEM, messages }, withId(countId)), { input_tokens: 18 });
  t.equal(agLast().path, '/v1/messages/count_tokens');
  t.equal((await logLine(requests, countId)).route, '/antigravity/v1/messages/count_tokens');

  const ids: string[] = [];
  for await (const model of antigravity.models.list()) ids.push(model.id);
  t.same(ids, ['claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4-5'], 'the pool\'s upstream\'s Anthropic models (not its Gemini one), not the demo group\'s');

  t.same(agSim.requests.slice(0, 3).map((r) => r.path), ['/v1/messages', '/v1/messages', '/v1/messages/count_tokens'], 'create, stream and count reached the dedicated upstream');
  t.same(agSim.requests.slice(3).map((r) => r.path).sort(), ['/v1/models?limit=1000', '/v1beta/models?pageSize=1000'], 'and its two vendor lists were asked');
  for (const r of agSim.requests) {
    t.equal(r.headers['x-api-key'] ?? r.headers['x-goog-api-key'], 'demo-antigravity-credential', `${r.path}: the dedicated account's credential`);
    t.equal(r.headers.authorization, undefined);
  }
  t.equal(sim.requests.length, before, 'the ordinary upstream saw none of them');

  // A model outside the pool is refused there even though the key's own group serves it.
  const refused = await rejection(antigravity.messages.create({ model: 'gpt-5', max_tokens: 10, messages }));
  t.ok(refused instanceof Anthropic.NotFoundError);
});

t.test('a mid-stream `event: error` reaches the SDK as an APIError from finalMessage()', async (t) => {
  const id = rid('msg-midstream');
  const stream = client.messages.stream({ model: MODEL, max_tokens: 100, system: SYSTEM, messages }, withId(id, { 'x-simulator-fault': 'midstream-error' }));
  const texts: string[] = [];
  stream.on('text', (delta) => texts.push(delta));
  const err = await rejection(stream.finalMessage());
  t.ok(err instanceof Anthropic.APIError, 'an APIError, not a message');
  t.same((err as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  t.same(texts, ['Echo', ':'], 'the two deltas before the failure arrived');
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'failed');
  // Only message_start's usage was seen: input 18, output 1.
  t.same(line.usage, usage(18, 1));

  // A stream the upstream cuts gets the gateway's own `event: error`.
  const cutId = rid('msg-truncate');
  const cut = await rejection(client.messages.stream({ model: MODEL, max_tokens: 100, messages }, withId(cutId, { 'x-simulator-fault': 'truncate' })).finalMessage());
  t.ok(cut instanceof Anthropic.APIError);
  t.same((cut as InstanceType<typeof Anthropic.APIError>).error, {
    type: 'error', error: { type: 'api_error', message: 'The upstream stream ended before it completed', code: 'upstream_stream_truncated' },
  });
  t.equal((await logLine(requests, cutId)).outcome, 'missing-terminal');
});

t.test('anthropic-beta and ?beta=true pass through (beta.messages create and countTokens)', async (t) => {
  // This SDK version no longer adds ?beta=true itself; older ones (and Claude Code) do, so it is sent as a request query.
  const beta = { query: { beta: 'true' } };
  const id = rid('msg-beta');
  const message = await client.beta.messages.create({
    model: MODEL, max_tokens: 100, system: SYSTEM, messages, betas: ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'],
  }, { ...beta, ...withId(id) });
  t.equal(message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), REPLY);
  t.equal(message.usage.input_tokens, 18);
  t.equal(last().path, '/v1/messages?beta=true');
  t.equal(last().headers['anthropic-beta'], 'context-management-2025-06-27,interleaved-thinking-2025-05-14');
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/messages');
  t.same(line.usage, usage(18, 8));

  // Streamed through the beta surface too.
  const streamId = rid('msg-beta-stream');
  const streamed = await client.beta.messages.stream({ model: MODEL, max_tokens: 100, system: SYSTEM, messages, betas: ['context-management-2025-06-27'] }, { ...beta, ...withId(streamId) }).finalMessage();
  t.equal(streamed.usage.output_tokens, 8);
  t.equal(last().path, '/v1/messages?beta=true');
  t.same((await logLine(requests, streamId)).usage, usage(18, 8));

  // The SDK adds its own token-counting beta after the caller's.
  const counted = await client.beta.messages.countTokens({ model: MODEL, system: SYSTEM, messages, betas: ['context-1m-2025-08-07'] }, beta);
  t.equal(counted.input_tokens, 18);
  t.equal(last().path, '/v1/messages/count_tokens?beta=true');
  t.equal(last().headers['anthropic-beta'], 'context-1m-2025-08-07,token-counting-2024-11-01');

  // Through the dedicated entry as well.
  await antigravity.beta.messages.create({ model: MODEL, max_tokens: 100, messages, betas: ['context-management-2025-06-27'] }, beta);
  t.equal(agLast().path, '/v1/messages?beta=true');
  t.equal(agLast().headers['anthropic-beta'], 'context-management-2025-06-27');
  await antigravity.beta.messages.countTokens({ model: MODEL, messages }, beta);
  t.equal(agLast().path, '/v1/messages/count_tokens?beta=true');
});

t.test('a Bearer client (authToken, as Claude Code sends it) works; the upstream still gets only the account key', async (t) => {
  const bearer = new Anthropic({ apiKey: null, authToken: DEMO_KEY, baseURL: gateway.url, maxRetries: 0 });
  const message = await bearer.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, system: SYSTEM, messages });
  t.equal(textOf(message), REPLY);
  t.equal(last().headers.authorization, undefined, 'the client\'s Authorization header is not forwarded');
  t.match(last().headers['x-api-key'], DEMO_ACCOUNT, 'one of the demo group\'s account keys');
});

t.test('the client key never reached either upstream', async (t) => {
  const all = [...sim.requests.map((r) => ['demo', r] as const), ...agSim.requests.map((r) => ['demo-antigravity', r] as const)];
  t.ok(sim.requests.length >= 10 && agSim.requests.length >= 4, `${sim.requests.length} + ${agSim.requests.length} upstream requests to inspect`);
  for (const [name, r] of all) {
    t.notOk(surfaces(r).some((s) => s.includes(DEMO_KEY)), `${name} ${r.method} ${r.path}: no client key in path, body or headers`);
    const sent = sentCredential(r);
    t.equal(sent.headers, 1, 'one credential header');
    t.match(sent.credential, name === 'demo' ? DEMO_ACCOUNT : /^demo-antigravity-credential$/, 'an account\'s credential');
  }
});
