// OpenAI Chat Completions on the simulator: replies, exact usage, validation and stream framing.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { AUTH, chunksOf, contentOf, framesOf, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const messages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hello, world! How are you today?' },
];
// By hand: "You are terse." = You|are|terse|. = 4; "Hello, world! How are you today?" = Hello|,|world|!|How|are|you|today|? = 9.
// prompt = (3 + 4) + (3 + 9) + 3 = 22.
// Reply "Echo: Hello, world! How are you today?" = Echo|:|Hello|,|world|!|How|are|you|today|? = 11.
const expectedUsage = {
  prompt_tokens: 22,
  completion_tokens: 11,
  total_tokens: 33,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

t.test('non-stream reply echoes the last user message with exact usage', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.match(res.headers.get('x-request-id'), /^req_sim_\d+$/);
  const body = await res.json();
  t.match(body.id, /^chatcmpl-sim-\d+$/);
  t.equal(body.id.slice('chatcmpl-sim-'.length), res.headers.get('x-request-id')!.slice('req_sim_'.length));
  t.equal(body.object, 'chat.completion');
  t.equal(body.model, 'gpt-4o-mini');
  t.equal(body.system_fingerprint, 'fp_simulator');
  t.equal(body.service_tier, 'default');
  t.type(body.created, 'number');
  t.same(body.choices, [{
    index: 0,
    message: { role: 'assistant', content: 'Echo: Hello, world! How are you today?', refusal: null, annotations: [] },
    logprobs: null,
    finish_reason: 'stop',
  }]);
  t.same(body.usage, expectedUsage);
});

t.test('array content counts its text parts and the reply keeps at most 12 words', async (t) => {
  const content = [
    { type: 'text', text: 'one two three four five six' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    { type: 'text', text: 'seven eight nine ten eleven twelve thirteen' },
  ];
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-5', messages: [{ role: 'user', content }] });
  const body = await res.json();
  // 13 words of text: prompt = (3 + 6 + 7) + 3 = 19. Reply: "Echo:" + 11 words = 12 words, tokens 2 + 11 = 13.
  t.equal(body.choices[0].message.content, 'Echo: one two three four five six seven eight nine ten eleven');
  t.equal(body.choices[0].finish_reason, 'stop');
  t.equal(body.usage.prompt_tokens, 19);
  t.equal(body.usage.completion_tokens, 13);
  t.equal(body.usage.total_tokens, 32);
  t.equal(body.model, 'gpt-5');
});

t.test('an output cap below the reply length truncates it with finish_reason length', async (t) => {
  for (const cap of [{ max_completion_tokens: 5 }, { max_tokens: 5 }]) {
    const body = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages, ...cap })).json();
    t.equal(body.choices[0].message.content, 'Echo: Hello, world', JSON.stringify(cap));
    t.equal(body.choices[0].finish_reason, 'length');
    t.equal(body.usage.completion_tokens, 5);
    t.equal(body.usage.total_tokens, 27);
  }
  const roomy = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages, max_completion_tokens: 11 })).json();
  t.equal(roomy.choices[0].finish_reason, 'stop');
});

t.test('bad requests get a 400 OpenAI error envelope', async (t) => {
  const cases: Array<[string, unknown, string | null]> = [
    ['bad JSON', '{"model": ', null],
    ['missing model', { messages }, 'model'],
    ['missing messages', { model: 'gpt-4o-mini' }, 'messages'],
    ['messages not an array', { model: 'gpt-4o-mini', messages: 'hi' }, 'messages'],
    ['bad max_tokens', { model: 'gpt-4o-mini', messages, max_tokens: -1 }, 'max_tokens'],
    ['body not an object', [1, 2], null],
  ];
  for (const [name, body, param] of cases) {
    const res = await postJson(sim, '/v1/chat/completions', body);
    t.equal(res.status, 400, name);
    const error = (await res.json()).error;
    t.equal(error.type, 'invalid_request_error', name);
    t.equal(error.param, param, name);
    t.type(error.message, 'string', name);
    t.ok('code' in error, name);
  }
});

t.test('unknown paths get a 404 OpenAI error envelope', async (t) => {
  const res = await fetch(sim.url + '/v1/nope', { headers: AUTH });
  t.equal(res.status, 404);
  t.same(await res.json(), { error: { message: 'Invalid URL (GET /v1/nope)', type: 'invalid_request_error', param: null, code: null } });
});

t.test('stream framing without include_usage', async (t) => {
  const whole = await (await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages })).json();
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages, stream: true });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.equal(res.headers.get('cache-control'), 'no-cache');
  const text = await res.text();
  t.ok(text.endsWith('data: [DONE]\n\n'), 'ends with [DONE]');
  t.notMatch(text, /^event:/m, 'no event: lines');
  for (const frame of framesOf(text)) t.match(frame, /^data: [^\n]+$/, 'one data line per frame');

  const chunks = chunksOf(text);
  const ids = new Set(chunks.map((c) => c.id));
  t.equal(ids.size, 1, 'one id across chunks');
  t.equal(new Set(chunks.map((c) => c.created)).size, 1, 'one created across chunks');
  t.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gpt-4o-mini'));
  t.ok(chunks.every((c) => !('usage' in c)), 'no usage key at all');
  t.same(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
  const last = chunks[chunks.length - 1];
  t.same(last.choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  t.ok(chunks.slice(0, -1).every((c) => c.choices[0].finish_reason === null));
  t.equal(contentOf(chunks), whole.choices[0].message.content, 'deltas concatenate to the non-stream reply');
  // One token per content chunk: 11 tokens, between the role chunk and the finish chunk.
  t.equal(chunks.length, 1 + 11 + 1);
});

t.test('stream with include_usage ends with a usage chunk that has no choices', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', {
    model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true },
  });
  const text = await res.text();
  const frames = framesOf(text);
  t.equal(frames[frames.length - 1], 'data: [DONE]');
  const chunks = chunksOf(text);
  const usageChunk = chunks[chunks.length - 1];
  t.same(usageChunk.choices, []);
  t.same(usageChunk.usage, expectedUsage);
  t.equal(chunks[chunks.length - 2].choices[0].finish_reason, 'stop');
  t.ok(chunks.slice(0, -1).every((c) => c.usage === null), 'earlier chunks carry usage: null');
  t.equal(contentOf(chunks), 'Echo: Hello, world! How are you today?');
});

t.test('a truncated stream ends with finish_reason length', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages, stream: true, max_tokens: 3 });
  const chunks = chunksOf(await res.text());
  t.equal(contentOf(chunks), 'Echo: Hello');
  t.equal(chunks[chunks.length - 1].choices[0].finish_reason, 'length');
});

t.test('chunk delay header paces the stream', async (t) => {
  const started = Date.now();
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a b' }], stream: true }, { 'x-simulator-chunk-delay-ms': '30' });
  const chunks = chunksOf(await res.text());
  // Frames: role, "Echo", ":", " a", " b", finish, [DONE] = 7 frames, 6 pauses of 30 ms.
  t.equal(contentOf(chunks), 'Echo: a b');
  t.ok(Date.now() - started >= 170, `took ${Date.now() - started} ms`);
});
