// End to end with the official `openai` SDK on the shipped gateway.yaml: Responses (every alias, stream, chain, retrieve,
// subpaths), Images (generate and multipart edit), model lists, and mid-stream failures — exact usage on the SDK objects
// and in the gateway's request log.
import t from 'tap';
import OpenAI, { toFile } from 'openai';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_ACCOUNT, DEMO_KEY, logLine, rejection, rid, sentCredential, SHIPPED_CONFIG, surfaces, usage } from '../helpers/e2e.ts';

const { gateway, requests } = await withLoggedGateway(t, SHIPPED_CONFIG);
const sim = gateway.simulators.demo;
const client = (baseURL: string) => new OpenAI({ apiKey: DEMO_KEY, baseURL, maxRetries: 0 });
const v1 = client(gateway.url + '/v1');
const bare = client(gateway.url);
const codex = client(gateway.url + '/backend-api/codex');
const last = () => sim.requests[sim.requests.length - 1];
const withId = (id: string, extra: Record<string, string> = {}) => ({ headers: { 'x-request-id': id, ...extra } });

// Simulator (Responses): input = Σ over instructions and items of (3 + tokens) + 3; the reply is "Echo: " + last user text.
// "Be brief." = Be|brief|. = 3 tokens; "What is 2 + 2?" = What|is|2|+|2|? = 6 → input 3 + (3+3) + (3+6) = 18.
// Reply "Echo: What is 2 + 2?" = Echo|:|What|is|2|+|2|? = 8 tokens.
const INSTRUCTIONS = 'Be brief.';
const QUESTION = 'What is 2 + 2?';
const REPLY = 'Echo: What is 2 + 2?';
const RESPONSE_USAGE = {
  input_tokens: 18, input_tokens_details: { cached_tokens: 0 },
  output_tokens: 8, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 26,
};

t.test('responses.create non-stream via /v1/responses: text, exact usage on the SDK object and in the log', async (t) => {
  const id = rid('resp');
  const res = await v1.responses.create({ model: 'gpt-5', instructions: INSTRUCTIONS, input: QUESTION }, withId(id));
  t.equal(res.object, 'response');
  t.equal(res.status, 'completed');
  t.equal(res.model, 'gpt-5');
  t.equal(res.output_text, REPLY);
  t.match(res.id, /^resp_sim_\d+$/);
  t.same(res.usage, RESPONSE_USAGE);
  t.equal(last().method, 'POST');
  t.equal(last().path, '/v1/responses');
  t.same(last().json, { model: 'gpt-5', instructions: INSTRUCTIONS, input: QUESTION }, 'the body went upstream unchanged');
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/responses');
  t.equal(line.status, 200);
  t.equal(line.outcome, 'completed');
  t.equal(line.model, 'gpt-5');
  t.equal(line.upstream_model, 'gpt-5');
  t.same(line.usage, usage(18, 8));
});

// The canonical event order of a text answer (docs/wire-formats.md#responses-stream): 4 deltas for "Echo: Hello there" = Echo|:| Hello| there.
const STREAM_TYPES = [
  'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
  'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta',
  'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
];
// "Hello there" = 2 tokens → input 3 + (3+2) = 8; "Echo: Hello there" = 4 tokens.
const HELLO_USAGE = {
  input_tokens: 8, input_tokens_details: { cached_tokens: 0 },
  output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12,
};

t.test('responses.stream: events arrive in order with sequence numbers 0..n, final response has exact usage', async (t) => {
  const id = rid('resp-stream');
  const stream = v1.responses.stream({ model: 'gpt-5', input: 'Hello there' }, withId(id));
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  const final = await stream.finalResponse();
  t.same(events.map((e) => e.type), STREAM_TYPES);
  t.same(events.map((e) => e.sequence_number), STREAM_TYPES.map((_, i) => i), 'sequence numbers 0..11, none missing');
  const deltas = events.filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta');
  t.same(deltas.map((d) => d.delta), ['Echo', ':', ' Hello', ' there']);
  t.equal(final.status, 'completed');
  t.equal(final.output_text, 'Echo: Hello there');
  t.same(final.usage, HELLO_USAGE);
  t.equal(last().path, '/v1/responses');
  t.equal((last().json as { stream: boolean }).stream, true);
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'completed');
  t.equal(line.stream, true);
  t.same(line.usage, usage(8, 4));
});

t.test('responses.create({stream:true}): the raw events, the terminal one carrying exact usage', async (t) => {
  const id = rid('resp-raw');
  const { data: stream, response } = await v1.responses.create({ model: 'gpt-5', input: 'Hello there', stream: true }, withId(id)).withResponse();
  t.match(response.headers.get('content-type'), /^text\/event-stream/);
  t.equal(response.headers.get('x-client-request-id'), id, 'the client\'s own well-formed request id is echoed');
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  t.same(events.map((e) => e.type), STREAM_TYPES);
  t.same(events.map((e) => e.sequence_number), STREAM_TYPES.map((_, i) => i));
  const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
  t.same(done.response.usage, HELLO_USAGE);
  t.same((await logLine(requests, id)).usage, usage(8, 4));
});

t.test('previous_response_id chain: the second turn\'s input includes the first turn\'s input and output', async (t) => {
  const first = await v1.responses.create({ model: 'gpt-5', input: 'Hello there' });
  t.same(first.usage, HELLO_USAGE);
  // Second turn: "And again" = 2 tokens → own input 3 + (3+2) = 8, plus the first turn's 8 + 4 = 12 → 20.
  // Reply "Echo: And again" = Echo|:|And|again = 4 tokens.
  const id = rid('resp-chain');
  const second = await v1.responses.create({ model: 'gpt-5', input: 'And again', previous_response_id: first.id }, withId(id));
  t.equal(second.previous_response_id, first.id);
  t.equal(second.output_text, 'Echo: And again');
  t.same(second.usage, {
    input_tokens: 20, input_tokens_details: { cached_tokens: 0 },
    output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 24,
  });
  t.equal((last().json as { previous_response_id: string }).previous_response_id, first.id);
  t.same((await logLine(requests, id)).usage, usage(20, 4));

  // A streamed third turn chains onto the second: "Once more" = 2 tokens → 8, plus 20 + 4 = 24 → 32; reply 4 tokens.
  const thirdId = rid('resp-chain-stream');
  const third = await v1.responses.stream({ model: 'gpt-5', input: 'Once more', previous_response_id: second.id }, withId(thirdId)).finalResponse();
  t.equal(third.output_text, 'Echo: Once more');
  t.same(third.usage, {
    input_tokens: 32, input_tokens_details: { cached_tokens: 0 },
    output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 36,
  });
  t.same((await logLine(requests, thirdId)).usage, usage(32, 4));
});

t.test('the /responses alias (base URL without /v1) reaches the upstream at /v1/responses', async (t) => {
  const id = rid('resp-bare');
  const res = await bare.responses.create({ model: 'gpt-5', instructions: INSTRUCTIONS, input: QUESTION }, withId(id));
  t.equal(res.output_text, REPLY);
  t.same(res.usage, RESPONSE_USAGE);
  t.equal(last().path, '/v1/responses');
  const line = await logLine(requests, id);
  t.equal(line.route, '/responses');
  t.same(line.usage, usage(18, 8));

  const streamId = rid('resp-bare-stream');
  const streamed = await bare.responses.stream({ model: 'gpt-5', input: 'Hello there' }, withId(streamId)).finalResponse();
  t.same(streamed.usage, HELLO_USAGE);
  t.equal(last().path, '/v1/responses');
  t.same((await logLine(requests, streamId)).usage, usage(8, 4));

  // The chain works across aliases: the same account holds the stored response.
  const chained = await bare.responses.create({ model: 'gpt-5', input: 'And again', previous_response_id: res.id });
  t.equal(chained.usage?.input_tokens, 8 + 18 + 8, 'own 8 + previous 18 in + 8 out');
});

t.test('the coding-agent entry /backend-api/codex/responses reaches the upstream at /v1/responses', async (t) => {
  const id = rid('resp-codex');
  const res = await codex.responses.create({ model: 'gpt-5', instructions: INSTRUCTIONS, input: QUESTION }, withId(id));
  t.equal(res.output_text, REPLY);
  t.same(res.usage, RESPONSE_USAGE);
  t.equal(last().path, '/v1/responses');
  const line = await logLine(requests, id);
  t.equal(line.route, '/backend-api/{client}/responses');
  t.same(line.usage, usage(18, 8));

  const streamId = rid('resp-codex-stream');
  const events: string[] = [];
  const stream = codex.responses.stream({ model: 'gpt-5', input: 'Hello there' }, withId(streamId));
  for await (const event of stream) events.push(event.type);
  t.same(events, STREAM_TYPES);
  t.same((await stream.finalResponse()).usage, HELLO_USAGE);
  t.equal(last().path, '/v1/responses');
  t.same((await logLine(requests, streamId)).usage, usage(8, 4));
});

t.test('responses.retrieve(id) through GET /v1/responses/{id}', async (t) => {
  const created = await v1.responses.create({ model: 'gpt-5', instructions: INSTRUCTIONS, input: QUESTION });
  const id = rid('resp-get');
  const got = await v1.responses.retrieve(created.id, {}, withId(id));
  t.equal(got.id, created.id);
  t.equal(got.status, 'completed');
  t.equal(got.output_text, REPLY);
  t.same(got.usage, RESPONSE_USAGE);
  t.equal(last().method, 'GET');
  t.equal(last().path, `/v1/responses/${created.id}`);
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/responses/{id}');
  t.equal(line.status, 200);
  // Reading a stored response generates nothing: its usage was already recorded by the create that produced it.
  t.equal(line.usage, undefined);

  const missing = await rejection(v1.responses.retrieve('resp_does_not_exist'));
  t.ok(missing instanceof OpenAI.NotFoundError, 'an unknown id is the upstream\'s 404, relayed');
  t.equal((missing as InstanceType<typeof OpenAI.NotFoundError>).status, 404);
  t.equal(((missing as InstanceType<typeof OpenAI.NotFoundError>).error as { message: string }).message, "Response with id 'resp_does_not_exist' not found.");
});

t.test('input_tokens through /v1/responses, /responses and /backend-api/codex/responses (unbilled count routes)', async (t) => {
  // input_tokens mirrors create: 18 for the instructions + question.
  for (const [sdk, route] of [[v1, '/v1/responses/input_tokens'], [bare, '/responses/input_tokens'], [codex, '/backend-api/{client}/responses/input_tokens']] as const) {
    const id = rid('resp-sub');
    const counted = await sdk.responses.inputTokens.count({ model: 'gpt-5', instructions: INSTRUCTIONS, input: QUESTION }, withId(id));
    t.same(counted, { object: 'response.input_tokens', input_tokens: 18 }, route);
    t.equal(last().path, '/v1/responses/input_tokens', `${route} → /v1/responses/input_tokens`);
    const line = await logLine(requests, id);
    t.equal(line.route, route);
    t.equal(line.model, 'gpt-5');
  }
  // A bodiless subpath (cancel) needs no model; the simulator has no cancel endpoint, so its own 404 comes back.
  const cancelled = await rejection(bare.responses.cancel('resp_sim_1'));
  t.ok(cancelled instanceof OpenAI.NotFoundError);
  t.equal(last().method, 'POST');
  t.equal(last().path, '/v1/responses/resp_sim_1/cancel');
  t.equal(((cancelled as InstanceType<typeof OpenAI.NotFoundError>).error as { message: string }).message, 'Invalid URL (POST /v1/responses/resp_sim_1/cancel)');
  // A model named on a subpath is still checked.
  const refused = await rejection(v1.responses.inputTokens.count({ model: 'o1-pro', input: QUESTION }));
  t.ok(refused instanceof OpenAI.NotFoundError);
  t.equal((refused as InstanceType<typeof OpenAI.NotFoundError>).code, 'model_not_found');
});

t.test('model alias: gpt-4o goes upstream as gpt-4o-mini; the client sees gpt-4o, whole and in every lifecycle event', async (t) => {
  const id = rid('resp-alias');
  const res = await v1.responses.create({ model: 'gpt-4o', input: 'Hello there' }, withId(id));
  t.equal(res.model, 'gpt-4o');
  t.same(res.usage, HELLO_USAGE);
  t.equal((last().json as { model: string }).model, 'gpt-4o-mini');
  const line = await logLine(requests, id);
  t.equal(line.model, 'gpt-4o');
  t.equal(line.upstream_model, 'gpt-4o-mini');
  t.same(line.usage, usage(8, 4));

  const streamId = rid('resp-alias-stream');
  const models: string[] = [];
  const stream = v1.responses.stream({ model: 'gpt-4o', input: 'Hello there' }, withId(streamId));
  for await (const event of stream) if ('response' in event) models.push(event.response.model);
  t.same(models, ['gpt-4o', 'gpt-4o', 'gpt-4o'], 'created, in_progress and completed all name the alias');
  const final = await stream.finalResponse();
  t.equal(final.model, 'gpt-4o');
  t.same(final.usage, HELLO_USAGE);
  t.equal((last().json as { model: string }).model, 'gpt-4o-mini');
  t.same((await logLine(requests, streamId)).usage, usage(8, 4));
});

t.test('a non-stream body cut by the upstream is a 502 (InternalServerError), never a short success', async (t) => {
  const id = rid('resp-cut-body');
  const err = await rejection(v1.responses.create({ model: 'gpt-5', input: 'Hello there' }, withId(id, { 'x-simulator-fault': 'truncate' })));
  t.ok(err instanceof OpenAI.InternalServerError);
  t.equal((err as InstanceType<typeof OpenAI.InternalServerError>).status, 502);
  t.equal((err as InstanceType<typeof OpenAI.InternalServerError>).code, 'upstream_truncated');
  const line = await logLine(requests, id);
  t.equal(line.status, 502);
  t.equal(line.outcome, 'failed');
});

t.test('a mid-stream upstream failure reaches the SDK as a failed response, never a completed one', async (t) => {
  const id = rid('resp-midstream');
  const stream = v1.responses.stream({ model: 'gpt-5', input: 'Hello there' }, withId(id, { 'x-simulator-fault': 'midstream-error' }));
  const types: string[] = [];
  for await (const event of stream) types.push(event.type);
  // openai-node resolves finalResponse() with the failed response (it throws only on `event: error`).
  const failed = await stream.finalResponse();
  t.notOk(types.includes('response.completed'), 'no clean finish');
  // The simulator cuts after 2 content deltas ("Echo", ":") and bills them: input 8, output 2.
  t.same(types, [...STREAM_TYPES.slice(0, 6), 'response.failed'], 'the stream ends with response.failed');
  t.equal(failed.status, 'failed');
  t.same(failed.error, { code: 'server_error', message: 'simulated mid-stream failure' });
  t.same(failed.usage, { input_tokens: 8, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10 });
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'failed');
  t.same(line.usage, usage(8, 2));
});

t.test('a stream cut by the upstream ends with the gateway\'s own response.failed, continuing the same response', async (t) => {
  const id = rid('resp-truncate');
  const { data: stream } = await v1.responses.create({ model: 'gpt-5', input: 'Hello there', stream: true }, withId(id, { 'x-simulator-fault': 'truncate' })).withResponse();
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  let thrown: unknown;
  try {
    for await (const event of stream) events.push(event);
  } catch (err) {
    thrown = err;
  }
  t.equal(thrown, undefined, 'the raw stream yields the failure as an event');
  t.same(events.map((e) => e.type), [...STREAM_TYPES.slice(0, 6), 'response.failed']);
  t.same(events.map((e) => e.sequence_number), [0, 1, 2, 3, 4, 5, 6], 'the synthesized event continues the sequence');
  const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent;
  t.equal(failed.response.id, (events[0] as OpenAI.Responses.ResponseCreatedEvent).response.id, 'and the response id');
  t.equal(failed.response.status, 'failed');
  t.same(failed.response.error, { code: 'upstream_stream_truncated', message: 'The upstream stream ended before it completed' });
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'missing-terminal');

  // The streaming helper sees the same failure and never reports completion.
  const helper = v1.responses.stream({ model: 'gpt-5', input: 'Hello there' }, { headers: { 'x-simulator-fault': 'truncate' } });
  const types: string[] = [];
  for await (const event of helper) types.push(event.type);
  const final = await helper.finalResponse();
  t.same(types, [...STREAM_TYPES.slice(0, 6), 'response.failed']);
  t.equal(final.status, 'failed');
  t.same(final.error, { code: 'upstream_stream_truncated', message: 'The upstream stream ended before it completed' });
});

// Simulator (Images, gpt-image-*): input = tokens of the prompt + 65 per input image; output = 272 per image.
t.test('images.generate: base64 image and exact usage, via /v1 and the root alias', async (t) => {
  const id = rid('img-gen');
  // "A red fox in snow" = A|red|fox|in|snow = 5 tokens; n = 2 → output 544.
  const res = await v1.images.generate({ model: 'gpt-image-1', prompt: 'A red fox in snow', n: 2 }, withId(id));
  t.equal(res.data?.length, 2);
  t.ok(res.data?.every((d) => Buffer.from(d.b64_json ?? '', 'base64').subarray(1, 4).toString() === 'PNG'), 'PNG bytes');
  t.same(res.usage, {
    input_tokens: 5, output_tokens: 544, total_tokens: 549,
    input_tokens_details: { text_tokens: 5, image_tokens: 0 },
    output_tokens_details: { image_tokens: 544, text_tokens: 0 },
  });
  t.equal(last().path, '/v1/images/generations');
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/images/generations');
  t.equal(line.model, 'gpt-image-1');
  t.same(line.usage, usage(5, 544));

  const aliasId = rid('img-gen-bare');
  const viaRoot = await bare.images.generate({ model: 'gpt-image-1', prompt: 'A red fox in snow' }, withId(aliasId));
  t.same(viaRoot.usage?.output_tokens, 272);
  t.equal(last().path, '/v1/images/generations');
  const aliasLine = await logLine(requests, aliasId);
  t.equal(aliasLine.route, '/images/generations');
  t.same(aliasLine.usage, usage(5, 272));
});

// A client whose fetch keeps a copy of each request body, so the bytes the upstream got can be compared with them.
const sent: Buffer[] = [];
const recording = new OpenAI({
  apiKey: DEMO_KEY, baseURL: gateway.url + '/v1', maxRetries: 0,
  fetch: async (url: string | URL | Request, init?: RequestInit) => {
    const request = new Request(url, init);
    sent.push(Buffer.from(await request.clone().arrayBuffer()));
    return fetch(request);
  },
});

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

t.test('images.edit: multipart with two images (image[]) and one (image), forwarded byte for byte, exact usage', async (t) => {
  const id = rid('img-edit');
  // "Add a hat" = Add|a|hat = 3 tokens + 2 × 65 image tokens = 133 input; 272 output.
  const images = [await toFile(PNG, 'a.png', { type: 'image/png' }), await toFile(Buffer.concat([PNG, Buffer.from('second')]), 'b.png', { type: 'image/png' })];
  const res = await recording.images.edit({ model: 'gpt-image-1', prompt: 'Add a hat', image: images }, withId(id));
  t.equal(res.data?.length, 1);
  t.same(res.usage, {
    input_tokens: 133, output_tokens: 272, total_tokens: 405,
    input_tokens_details: { text_tokens: 3, image_tokens: 130 },
    output_tokens_details: { image_tokens: 272, text_tokens: 0 },
  });
  const upstream = last();
  t.equal(upstream.path, '/v1/images/edits');
  t.match(String(upstream.headers['content-type']), /^multipart\/form-data; boundary=/);
  t.equal(upstream.body.match(/name="image\[\]"/g)?.length, 2, 'both files, as image[]');
  t.ok(upstream.body.includes('second'), 'the second file\'s own bytes');
  t.equal(upstream.body, sent.at(-1)!.toString('utf8'), 'the original multipart bytes, unchanged');
  t.equal(Number(upstream.headers['content-length']), sent.at(-1)!.length);
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/images/edits');
  t.equal(line.model, 'gpt-image-1');
  t.same(line.usage, usage(133, 272));

  // One file goes as `image`, through the root alias: "Add a hat" 3 + 65 = 68 input.
  const oneId = rid('img-edit-one');
  const one = await bare.images.edit({ model: 'gpt-image-1', prompt: 'Add a hat', image: await toFile(PNG, 'a.png', { type: 'image/png' }) }, withId(oneId));
  t.same(one.usage?.input_tokens_details, { text_tokens: 3, image_tokens: 65 });
  t.equal(last().path, '/v1/images/edits');
  t.equal(last().body.match(/name="image"/g)?.length, 1);
  const oneLine = await logLine(requests, oneId);
  t.equal(oneLine.route, '/images/edits');
  t.same(oneLine.usage, usage(68, 272));

  // The model in the form is checked like any other.
  const refused = await rejection(v1.images.edit({ model: 'dall-e-2', prompt: 'Add a hat', image: await toFile(PNG, 'a.png') }));
  t.ok(refused instanceof OpenAI.NotFoundError, 'a model outside the group → NotFoundError');
  t.equal((refused as InstanceType<typeof OpenAI.NotFoundError>).code, 'model_not_found');
});

t.test('images.edit: a JSON body (images[] by URL) and a multipart model alias rewritten in place', async (t) => {
  const id = rid('img-edit-json');
  // JSON edits name their inputs in images[]: "Add a hat" 3 + 2 × 65 = 133 input tokens.
  const res = await fetch(gateway.url + '/v1/images/edits', {
    method: 'POST', headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: 'gpt-image-1', prompt: 'Add a hat', images: [{ image_url: 'https://example.com/a.png' }, { file_id: 'file-1' }] }),
  });
  t.equal(res.status, 200);
  t.same(((await res.json()) as { usage: { input_tokens: number } }).usage.input_tokens, 133);
  t.same((await logLine(requests, id)).usage, usage(133, 272));

  // gpt-4o is an alias of gpt-4o-mini in the demo group: the form field is rewritten, the rest of the bytes kept.
  const aliasId = rid('img-edit-alias');
  await recording.images.edit({ model: 'gpt-4o', prompt: 'Add a hat', image: await toFile(PNG, 'a.png', { type: 'image/png' }) }, withId(aliasId));
  const upstream = last();
  const original = sent.at(-1)!.toString('utf8');
  t.equal(upstream.body, original.replace(/(name="model"\r\n\r\n)gpt-4o\r\n/, '$1gpt-4o-mini\r\n'), 'only the model value changed');
  t.not(upstream.body, original);
  t.equal(Number(upstream.headers['content-length']), sent.at(-1)!.length + '-mini'.length, 'content-length follows the rewrite');
  const line = await logLine(requests, aliasId);
  t.equal(line.model, 'gpt-4o');
  t.equal(line.upstream_model, 'gpt-4o-mini');
});

t.test('chat completions on the shipped routes: /v1/chat/completions and the /chat/completions alias', async (t) => {
  // "Hello there" = 2 tokens → prompt 3 + (3 + 2) = 8; reply "Echo: Hello there" = 4 tokens.
  for (const [sdk, route] of [[v1, '/v1/chat/completions'], [bare, '/chat/completions']] as const) {
    const id = rid('chat');
    const res = await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] }, withId(id));
    t.equal(res.choices[0].message.content, 'Echo: Hello there');
    t.same({ p: res.usage?.prompt_tokens, c: res.usage?.completion_tokens, total: res.usage?.total_tokens }, { p: 8, c: 4, total: 12 });
    t.equal(last().path, '/v1/chat/completions');
    const line = await logLine(requests, id);
    t.equal(line.route, route);
    t.same(line.usage, usage(8, 4));
  }
});

t.test('models.list and models.retrieve: the demo group\'s OpenAI models, OpenAI shape', async (t) => {
  const before = sim.requests.length;
  const page = await v1.models.list();
  // Concrete names, the gpt-4o alias, and what the upstream's OpenAI list offers the gpt-5* and text-embedding-* globs;
  // the group's Claude and Gemini models are on their own vendors' lists.
  t.same(page.data.map((m) => m.id), ['gpt-4o', 'gpt-4o-mini', 'gpt-5', 'gpt-5-mini', 'gpt-image-1', 'text-embedding-3-small'], 'sorted');
  t.same(page.data[2], { id: 'gpt-5', object: 'model', created: 1704067200, owned_by: 'demo' });
  t.same(sim.requests.slice(before).map((r) => `${r.method} ${r.path}`).sort(), ['GET /v1/models', 'GET /v1/models?limit=1000', 'GET /v1beta/models?pageSize=1000'], 'each vendor\'s list asked once');
  const asked = sim.requests.length;
  const one = await v1.models.retrieve('gpt-5-turbo');
  t.same(one, { id: 'gpt-5-turbo', object: 'model', created: 1704067200, owned_by: 'demo' }, 'a glob-allowed model can be looked up');
  const missing = await rejection(v1.models.retrieve('o1-pro'));
  t.ok(missing instanceof OpenAI.NotFoundError);
  t.same((await v1.models.list()).data.length, 6);
  t.equal(sim.requests.length, asked, 'lookups and a warm list: answered by the gateway itself');
});

t.test('the client key never reached the upstream; the account credential did', async (t) => {
  t.ok(sim.requests.length >= 20, `${sim.requests.length} upstream requests to inspect`);
  for (const [i, r] of sim.requests.entries()) {
    t.notOk(surfaces(r).some((s) => s.includes(DEMO_KEY)), `request ${i} (${r.method} ${r.path}) carries no client key`);
    const sent = sentCredential(r);
    t.equal(sent.headers, 1, `request ${i}: one credential header`);
    t.match(sent.credential, DEMO_ACCOUNT, `request ${i}: an account credential`);
  }
  const used = new Set(sim.requests.map((r) => sentCredential(r).credential));
  t.equal(used.size, 3, 'the shipped demo group spreads requests over its three accounts');
  t.same(gateway.simulators['demo-antigravity'].requests, [], 'nothing went to the dedicated pool');
});
