// End to end with the official `openai` SDK: gateway → simulator, checking replies, exact usage, aliases, error classes and secrets.
import t from 'tap';
import OpenAI from 'openai';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { sentCredential } from '../helpers/e2e.ts';

const gw = await withGateway(t, demoConfig());
const sim = gw.simulators.sim;

const ALICE = 'sk-alice-0001';
const BOB = 'sk-bob-0002';
const CLIENT_KEYS = [ALICE, BOB, 'sk-off-0003', 'sk-old-0004', 'sk-wrong-9999'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const client = (apiKey: string, baseURL = gw.url + '/v1') => new OpenAI({ apiKey, baseURL, maxRetries: 0 });
const alice = client(ALICE);

// Simulator rule: prompt = 3 + Σ(3 + tokens of each message); the reply echoes the last user turn after "Echo:".
// "You are terse." = You|are|terse|. = 4 tokens; "What is 2 + 2?" = What|is|2|+|2|? = 6 tokens → prompt 3 + 7 + 9 = 19.
// Reply "Echo: What is 2 + 2?" = Echo|:|What|is|2|+|2|? = 8 tokens.
const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'What is 2 + 2?' },
];
const REPLY = 'Echo: What is 2 + 2?';
const USAGE = {
  prompt_tokens: 19, completion_tokens: 8, total_tokens: 27,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

// Tool call: "Weather in Paris?" = 4 tokens → prompt 3 + 3 + 4 = 10; arguments {"input":"Weather in Paris?"} =
// {|"|input|"|:|"|Weather|in|Paris|?|"|} = 12 tokens.
const tools: OpenAI.ChatCompletionTool[] = [{
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { input: { type: 'string' } } } },
}];
const toolMessages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
const TOOL_ARGS = '{"input":"Weather in Paris?"}';

function lastRecorded() {
  return sim.requests[sim.requests.length - 1];
}

t.test('models.list: the group\'s concrete models, aliases, and the upstream\'s models its globs match', async (t) => {
  const before = sim.requests.length;
  const page = await alice.models.list();
  t.same(page.data.map((m) => m.id), ['gpt-4o', 'gpt-4o-mini', 'gpt-5', 'gpt-5-mini'], 'gpt-4o-mini, the gpt-4o alias, and the upstream\'s gpt-5 models');
  t.same(page.data[0], { id: 'gpt-4o', object: 'model', created: 1704067200, owned_by: 'sim' });
  // The simulator serves every vendor: each vendor's own list was asked once (so each vendor's clients see their own).
  t.same(sim.requests.slice(before).map((r) => `${r.method} ${r.path}`).sort(), ['GET /v1/models', 'GET /v1/models?limit=1000', 'GET /v1beta/models?pageSize=1000']);
  const asked = sim.requests.length;
  const bobs = await client(BOB).models.list();
  t.same(bobs.data.map((m) => m.id), ['gpt-4o-mini'], 'bob\'s key narrows the list');
  t.equal(sim.requests.length, asked, 'a warm list is answered by the gateway, not the upstream');
});

t.test('chat non-stream: reply text and exact usage', async (t) => {
  const { data, response, request_id } = await alice.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
  t.equal(data.object, 'chat.completion');
  t.equal(data.model, 'gpt-4o-mini');
  t.equal(data.choices.length, 1);
  t.equal(data.choices[0].message.content, REPLY);
  t.equal(data.choices[0].finish_reason, 'stop');
  t.same(data.usage, USAGE);
  t.match(response.headers.get('x-request-id'), UUID, 'the gateway\'s own request id');
  t.equal(request_id, response.headers.get('x-request-id'), 'the SDK surfaces it as request_id');
  t.match(response.headers.get('x-upstream-request-id'), /^req_sim_\d+$/, 'the upstream id is kept apart');
  t.equal(lastRecorded().path, '/v1/chat/completions');
  t.equal((lastRecorded().json as { model: string }).model, 'gpt-4o-mini');
});

t.test('chat stream with include_usage: deltas rebuild the text, the final chunk carries exact usage', async (t) => {
  const { data: stream, response } = await alice.chat.completions
    .create({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  t.match(response.headers.get('x-request-id'), UUID);
  t.match(response.headers.get('content-type'), /^text\/event-stream/);
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  // role chunk + 8 token chunks + finish chunk + usage chunk
  t.equal(chunks.length, 11);
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), REPLY);
  t.equal(chunks[9].choices[0].finish_reason, 'stop');
  const last = chunks[10];
  t.same(last.choices, [], 'the usage chunk has no choices');
  t.same(last.usage, USAGE);
  t.ok(chunks.slice(0, 10).every((c) => c.usage === null), 'earlier chunks carry usage: null');
  t.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id across chunks');
});

t.test('chat stream without include_usage: no usage reaches the client, but it was forced upstream', async (t) => {
  const stream = await alice.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.equal(chunks.length, 10, 'role + 8 tokens + finish, no usage chunk');
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), REPLY);
  t.ok(chunks.every((c) => c.choices.length === 1), 'no choices-less usage chunk');
  t.ok(chunks.every((c) => !c.usage), 'no chunk carries a usage object');
  const upstream = lastRecorded().json as { stream: boolean; stream_options?: { include_usage?: boolean } };
  t.equal(upstream.stream, true);
  t.equal(upstream.stream_options?.include_usage, true, 'the gateway asked the upstream for usage to meter it');
});

t.test('chat stream without include_usage: chunks look as if usage was never asked for', async (t) => {
  const stream = await alice.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.equal(chunks.length, 10);
  t.equal(chunks.filter((c) => 'usage' in c).length, 0, 'an upstream that was not asked for usage sends no usage key (docs/wire-formats.md#chat-stream)');
});

t.test('tool call, non-stream', async (t) => {
  const res = await alice.chat.completions.create({ model: 'gpt-4o-mini', messages: toolMessages, tools });
  const choice = res.choices[0];
  t.equal(choice.finish_reason, 'tool_calls');
  t.equal(choice.message.content, null);
  t.equal(choice.message.tool_calls?.length, 1);
  const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.equal(call.type, 'function');
  t.match(call.id, /^call_sim_\d+$/);
  t.equal(call.function.name, 'get_weather');
  t.equal(call.function.arguments, TOOL_ARGS);
  t.same(JSON.parse(call.function.arguments), { input: 'Weather in Paris?' });
  t.same({ p: res.usage?.prompt_tokens, c: res.usage?.completion_tokens, total: res.usage?.total_tokens }, { p: 10, c: 12, total: 22 });
  t.same((lastRecorded().json as { tools: unknown }).tools, tools, 'tools forwarded untouched');
});

t.test('tool call, stream: argument fragments reassemble to the JSON', async (t) => {
  const stream = await alice.chat.completions.create({ model: 'gpt-4o-mini', messages: toolMessages, tools, stream: true, stream_options: { include_usage: true } });
  let args = '';
  let name = '';
  let id = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  let fragments = 0;
  for await (const chunk of stream) {
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      t.equal(call.index, 0);
      if (call.id) id = call.id;
      if (call.function?.name) name = call.function.name;
      if (call.function?.arguments) { args += call.function.arguments; fragments++; }
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  t.equal(name, 'get_weather');
  t.match(id, /^call_sim_\d+$/);
  t.equal(fragments, 3, 'the simulator splits the arguments in three');
  t.equal(args, TOOL_ARGS);
  t.same(JSON.parse(args), { input: 'Weather in Paris?' });
  t.equal(finish, 'tool_calls');
  t.same({ p: usage?.prompt_tokens, c: usage?.completion_tokens }, { p: 10, c: 12 });
});

t.test('model alias: gpt-4o goes upstream as gpt-4o-mini, the client sees gpt-4o', async (t) => {
  const res = await alice.chat.completions.create({ model: 'gpt-4o', messages });
  t.equal(res.model, 'gpt-4o');
  t.equal(res.choices[0].message.content, REPLY);
  t.equal((lastRecorded().json as { model: string }).model, 'gpt-4o-mini');

  const stream = await alice.chat.completions.create({ model: 'gpt-4o', messages, stream: true, stream_options: { include_usage: true } });
  const models: string[] = [];
  for await (const chunk of stream) models.push(chunk.model);
  t.equal(models.length, 11);
  t.same([...new Set(models)], ['gpt-4o'], 'every stream chunk, usage chunk included, names the alias');
  t.equal((lastRecorded().json as { model: string }).model, 'gpt-4o-mini');
});

async function sdkError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  throw new Error('expected the SDK to throw');
}

t.test('SDK error classes for refused keys and models', async (t) => {
  const before = sim.requests.length;

  // The SDK refuses to be built without a key, so send none by nulling the Authorization header on the request.
  const missing = await sdkError(alice.chat.completions.create({ model: 'gpt-4o-mini', messages }, { headers: { Authorization: null } }));
  t.ok(missing instanceof OpenAI.AuthenticationError, 'missing key → AuthenticationError');
  t.equal(missing.status, 401);
  t.equal(missing.code, 'API_KEY_REQUIRED');
  t.match(missing.headers?.get('x-request-id'), UUID);

  const wrong = await sdkError(client('sk-wrong-9999').chat.completions.create({ model: 'gpt-4o-mini', messages }));
  t.ok(wrong instanceof OpenAI.AuthenticationError, 'bad key → AuthenticationError');
  t.equal(wrong.status, 401);
  t.equal(wrong.code, 'INVALID_API_KEY');
  t.match(wrong.headers?.get('x-request-id'), UUID);

  const disabled = await sdkError(client('sk-off-0003').chat.completions.create({ model: 'gpt-4o-mini', messages }));
  t.ok(disabled instanceof OpenAI.AuthenticationError, 'disabled key → AuthenticationError');
  t.equal(disabled.status, 401);
  t.equal(disabled.code, 'API_KEY_DISABLED');

  const expired = await sdkError(client('sk-old-0004').chat.completions.create({ model: 'gpt-4o-mini', messages }));
  t.ok(expired instanceof OpenAI.PermissionDeniedError, 'expired key → PermissionDeniedError');
  t.equal(expired.status, 403);
  t.equal(expired.code, 'API_KEY_EXPIRED');

  const model = await sdkError(alice.chat.completions.create({ model: 'gpt-3.5-turbo', messages }));
  t.ok(model instanceof OpenAI.NotFoundError, 'disallowed model → NotFoundError');
  t.equal(model.status, 404);
  t.equal(model.code, 'model_not_found');
  t.equal(model.param, 'model');
  t.match((model.error as { message: string }).message, '/v1/models', 'the refusal points at the model list');
  t.match(model.headers?.get('x-request-id'), UUID);

  const narrowed = await sdkError(client(BOB).chat.completions.create({ model: 'gpt-5-mini', messages }));
  t.ok(narrowed instanceof OpenAI.NotFoundError, 'a model outside the key\'s own list → NotFoundError');
  t.equal(narrowed.code, 'model_not_found');

  const listing = await sdkError(client('sk-wrong-9999').models.list());
  t.ok(listing instanceof OpenAI.AuthenticationError, 'the model list is guarded too');
  t.equal(listing.code, 'INVALID_API_KEY');

  t.equal(sim.requests.length, before, 'no refused request reached the upstream');
});

t.test('the /chat/completions alias (base URL without /v1) reaches the upstream at /v1/chat/completions', async (t) => {
  const bare = client(ALICE, gw.url);
  const res = await bare.chat.completions.create({ model: 'gpt-4o-mini', messages });
  t.equal(res.choices[0].message.content, REPLY);
  t.same(res.usage, USAGE);
  t.equal(lastRecorded().path, '/v1/chat/completions');
  t.equal(lastRecorded().method, 'POST');
});

// The group's only account answers 429: the request has nowhere else to go, so the pool answers with its own 429 and
// the account cools down until the reset the upstream announced (retry-after: 1), serving nothing meanwhile.
t.test('an upstream 429 reaches the SDK as RateLimitError with the pool\'s body and retry-after', async (t) => {
  const before = sim.requests.length;
  const err = await sdkError(alice.chat.completions.create({ model: 'gpt-4o-mini', messages }, { headers: { 'x-simulator-fault': 'status=429' } }));
  t.ok(err instanceof OpenAI.RateLimitError);
  t.equal(err.status, 429);
  const body = { message: 'Every upstream account of group "main" is rate limited; retry after 1 s', type: 'rate_limit_error', param: null, code: 'ALL_ACCOUNTS_RATE_LIMITED' };
  t.same(err.error, body);
  t.equal(err.headers?.get('retry-after'), '1');
  t.match(err.headers?.get('x-request-id'), UUID, 'the gateway id');
  t.equal(sim.requests.length, before + 1, 'maxRetries 0: exactly one upstream attempt');
  const again = await sdkError(alice.chat.completions.create({ model: 'gpt-4o-mini', messages }));
  t.ok(again instanceof OpenAI.RateLimitError, 'while the account cools down, the pool answers 429 at once');
  t.same(again.error, body);
  t.equal(sim.requests.length, before + 1, 'the cooling account was not asked');
});

t.test('secrets: no client key ever reached the upstream; the account credential did', async (t) => {
  const requests = sim.requests;
  t.equal(requests.length, 13, 'the earlier tests left 13 upstream requests to inspect (3 of them model-list asks)');
  for (const [i, r] of requests.entries()) {
    const surfaces = [r.path, r.body, JSON.stringify(r.headers)];
    for (const key of CLIENT_KEYS) {
      t.notOk(surfaces.some((s) => s.includes(key)), `request ${i}: ${key} is absent from path, body and headers`);
    }
    // In the vendor's own header: a list asked of the Anthropic or Gemini side of the simulator uses theirs.
    t.same(sentCredential(r), { credential: 'upstream-credential-1', headers: 1 }, `request ${i}: the account credential, once`);
  }
});
