// Gemini on the simulator: generateContent, data-only SSE and JSON-array streams, countTokens, models, auth and faults.
import t, { type Test } from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { readToCut } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const KEY = { 'x-goog-api-key': 'AIza-upstream' };
const question = 'Hello, world! How are you today?';
const answer = 'Echo: Hello, world! How are you today?';
// By hand: system "Be brief." = Be|brief|. = 3; the question = Hello|,|world|!|How|are|you|today|? = 9.
// prompt = (3 + 3) + (3 + 9) + 3 = 21; the answer = Echo|:|Hello|,|world|!|How|are|you|today|? = 11.
const body = { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: question }] }] };
const tools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { input: { type: 'STRING' } } } }] }];
const weather = { contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], tools };

function post(path: string, payload: unknown, headers: Record<string, string> = KEY): Promise<Response> {
  return fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof payload === 'string' ? payload : JSON.stringify(payload) });
}

/** Splits a data-only SSE body, asserting every frame is exactly one `data:` line of JSON. */
function sseChunks(t: Test, text: string): any[] {
  t.ok(text.endsWith('\r\n\r\n'), 'the last frame ends with CRLF CRLF');
  const frames = text.split('\r\n\r\n').slice(0, -1);
  for (const frame of frames) t.match(frame, /^data: [^\r\n]+$/, 'a single data: line, no event:, no comment');
  t.notMatch(text, /\[DONE\]|^event:|^:/m);
  return frames.map((frame) => JSON.parse(frame.slice('data: '.length)));
}

t.test('generateContent: a GenerateContentResponse with exact usage, under v1beta and v1', async (t) => {
  for (const version of ['v1beta', 'v1']) {
    const res = await post(`/${version}/models/gemini-2.5-flash:generateContent`, body);
    t.equal(res.status, 200, version);
    const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
    t.same(await res.json(), {
      candidates: [{ content: { parts: [{ text: answer }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 21, candidatesTokenCount: 11, totalTokenCount: 32 },
      modelVersion: 'gemini-2.5-flash',
      responseId: `sim-resp-${n}`,
    });
  }
});

t.test('snake_case fields and maxOutputTokens → MAX_TOKENS', async (t) => {
  const snake = { system_instruction: { parts: [{ text: 'Be brief.' }] }, contents: body.contents, generation_config: { max_output_tokens: 5 } };
  const reply = await (await post('/v1beta/models/gemini-2.5-pro:generateContent', snake)).json();
  t.same(reply.candidates[0].content.parts, [{ text: 'Echo: Hello, world' }]);
  t.equal(reply.candidates[0].finishReason, 'MAX_TOKENS');
  t.same(reply.usageMetadata, { promptTokenCount: 21, candidatesTokenCount: 5, totalTokenCount: 26 });
  t.equal(reply.modelVersion, 'gemini-2.5-pro');
  const camel = await (await post('/v1beta/models/gemini-2.5-pro:generateContent', { ...body, generationConfig: { maxOutputTokens: 5 } })).json();
  t.equal(camel.candidates[0].finishReason, 'MAX_TOKENS');
});

t.test('functionDeclarations give a functionCall part that still finishes with STOP', async (t) => {
  const reply = await (await post('/v1beta/models/gemini-2.5-flash:generateContent', weather)).json();
  t.same(reply.candidates[0], { content: { parts: [{ functionCall: { name: 'get_weather', args: { input: 'Weather in Paris?' } } }], role: 'model' }, finishReason: 'STOP', index: 0 });
  // By hand: prompt (3 + Weather|in|Paris|? 4) + 3 = 10; args JSON {|"|input|"|:|"|Weather|in|Paris|?|"|} = 12.
  t.same(reply.usageMetadata, { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 });
  const off = await (await post('/v1beta/models/gemini-2.5-flash:generateContent', { ...weather, toolConfig: { functionCallingConfig: { mode: 'NONE' } } })).json();
  t.same(off.candidates[0].content.parts, [{ text: 'Echo: Weather in Paris?' }]);
  const twoTools = [{ functionDeclarations: [...tools[0].functionDeclarations, { name: 'get_time' }] }];
  const allowed = await (await post('/v1beta/models/gemini-2.5-flash:generateContent', { ...weather, tools: twoTools, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } } })).json();
  t.equal(allowed.candidates[0].content.parts[0].functionCall.name, 'get_time');
});

t.test('a functionResponse turn is reported back and counted', async (t) => {
  const contents = [
    { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { input: 'Weather in Paris?' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21 } } }] },
  ];
  const reply = await (await post('/v1beta/models/gemini-2.5-flash:generateContent', { contents, tools })).json();
  t.same(reply.candidates[0].content.parts, [{ text: 'Tool result: {"temp_c":21}' }]);
  // By hand: (3 + 4) + (3 + 0) + (3 + {|"|temp|_|c|"|:|21|} 9) + 3 = 25; reply Tool|result|: + 9 = 12.
  t.same(reply.usageMetadata, { promptTokenCount: 25, candidatesTokenCount: 12, totalTokenCount: 37 });
});

t.test('streamGenerateContent?alt=sse: data-only CRLF frames, usage growing to the last, finishReason on the last', async (t) => {
  const res = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  const chunks = sseChunks(t, await res.text());
  t.equal(chunks.length, 11, 'one chunk per token');
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  t.ok(chunks.every((c) => c.modelVersion === 'gemini-2.5-flash' && c.responseId === `sim-resp-${n}`), 'modelVersion and responseId on every chunk');
  t.equal(chunks.map((c) => c.candidates[0].content.parts[0].text).join(''), answer);
  for (const c of chunks.slice(0, -1)) {
    t.notOk('finishReason' in c.candidates[0]);
    t.same(c.usageMetadata, { promptTokenCount: 21, totalTokenCount: 21 });
  }
  const last = chunks[chunks.length - 1];
  t.same(last.candidates[0], { content: { parts: [{ text: '?' }], role: 'model' }, finishReason: 'STOP', index: 0 });
  t.same(last.usageMetadata, { promptTokenCount: 21, candidatesTokenCount: 11, totalTokenCount: 32 });
});

t.test('streamed function call: one whole functionCall chunk', async (t) => {
  const res = await post('/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse', weather);
  const chunks = sseChunks(t, await res.text());
  t.equal(chunks.length, 1);
  t.same(chunks[0].candidates[0], { content: { parts: [{ functionCall: { name: 'get_weather', args: { input: 'Weather in Paris?' } } }], role: 'model' }, finishReason: 'STOP', index: 0 });
  t.same(chunks[0].usageMetadata, { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 });
});

t.test('streamGenerateContent without alt: one JSON array, elements separated by CRLF commas', async (t) => {
  const res = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent', body);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/json');
  const text = await res.text();
  t.ok(text.startsWith('[{'));
  t.ok(text.endsWith('}\r\n]'));
  t.equal(text.split('}\r\n,\r\n{').length, 11);
  const chunks = JSON.parse(text);
  t.equal(chunks.length, 11);
  t.equal(chunks.map((c: any) => c.candidates[0].content.parts[0].text).join(''), answer);
  t.same(chunks[10].usageMetadata, { promptTokenCount: 21, candidatesTokenCount: 11, totalTokenCount: 32 });
  t.equal(chunks[10].candidates[0].finishReason, 'STOP');
});

t.test('countTokens: contents alone or a whole generateContentRequest', async (t) => {
  const bare = await post('/v1beta/models/gemini-2.5-flash:countTokens', { contents: body.contents });
  t.same(await bare.json(), { totalTokens: 15 });
  const whole = await post('/v1/models/gemini-2.5-flash:countTokens', { generateContentRequest: { model: 'models/gemini-2.5-flash', ...body } });
  t.same(await whole.json(), { totalTokens: 21 });
});

t.test('credentials: x-goog-api-key, ?key= or Bearer; a bad key is 400 INVALID_ARGUMENT, none 403', async (t) => {
  const path = '/v1beta/models/gemini-2.5-flash:generateContent';
  t.equal((await post(path, body)).status, 200);
  t.equal((await post(`${path}?key=AIza-query`, body, {})).status, 200);
  t.equal((await post(path, body, { authorization: 'Bearer ya29.token' })).status, 200);
  const bad = await post(`${path}?key=sim-bad-credential`, body, {});
  t.equal(bad.status, 400);
  t.same(await bad.json(), { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } });
  const badHeader = await post(path, body, { 'x-goog-api-key': 'sim-bad-credential' });
  t.equal(badHeader.status, 400);
  const none = await post(path, body, {});
  t.equal(none.status, 403);
  t.equal((await none.json()).error.status, 'PERMISSION_DENIED');
  const recorded = sim.requests.find((r) => r.path === `${path}?key=AIza-query`);
  t.ok(recorded, 'the query key is recorded with the path');
});

t.test('bad bodies and unknown methods answer with the Google envelope', async (t) => {
  const missing = await post('/v1beta/models/gemini-2.5-flash:generateContent', { contents: [] });
  t.equal(missing.status, 400);
  t.same(await missing.json(), { error: { code: 400, message: '* GenerateContentRequest.contents: contents is not specified\n', status: 'INVALID_ARGUMENT' } });
  const notJson = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', '{"contents":');
  t.equal(notJson.status, 400);
  const unknown = await post('/v1beta/models/gemini-2.5-flash:embedContent', body);
  t.equal(unknown.status, 404);
  const error = (await unknown.json()).error;
  t.same([error.code, error.status], [404, 'NOT_FOUND']);
});

t.test('GET /v1beta/models lists and pages; GET /v1beta/models/{model} finds one or 404s', async (t) => {
  const res = await fetch(sim.url + '/v1beta/models', { headers: KEY });
  t.equal(res.status, 200);
  const list = await res.json();
  t.same(Object.keys(list), ['models'], 'no nextPageToken on the last page');
  t.same(list.models.map((m: { name: string }) => m.name), [
    'models/gemini-2.5-flash', 'models/gemini-2.5-pro', 'models/gemini-2.0-flash', 'models/gemini-embedding-001', 'models/gemini-embedding-2',
  ]);
  const flash = list.models[0];
  for (const key of ['name', 'version', 'displayName', 'description', 'inputTokenLimit', 'outputTokenLimit', 'supportedGenerationMethods']) t.ok(key in flash, key);
  t.same(flash.supportedGenerationMethods, ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent']);

  const names: string[] = [];
  let token: string | undefined;
  do {
    const page = await (await fetch(`${sim.url}/v1beta/models?pageSize=2${token ? `&pageToken=${token}` : ''}`, { headers: KEY })).json();
    names.push(...page.models.map((m: { name: string }) => m.name));
    token = page.nextPageToken;
  } while (token);
  t.same(names, list.models.map((m: { name: string }) => m.name), 'pages walk the whole list');

  const one = await fetch(`${sim.url}/v1beta/models/gemini-2.5-flash?key=AIza`, {});
  t.same(await one.json(), flash);
  const missing = await fetch(sim.url + '/v1beta/models/gemini-nope', { headers: KEY });
  t.equal(missing.status, 404);
  t.same(await missing.json(), { error: { code: 404, message: 'Model is not found: models/gemini-nope for api version v1beta', status: 'NOT_FOUND' } });
  const openai = await (await fetch(sim.url + '/v1/models', { headers: { authorization: 'Bearer k' } })).json();
  t.equal(openai.object, 'list', '/v1/models stays the OpenAI list');
});

t.test('status faults answer with the Google envelope', async (t) => {
  const expected: Record<number, string> = { 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 400: 'INVALID_ARGUMENT', 404: 'NOT_FOUND', 504: 'DEADLINE_EXCEEDED' };
  for (const [status, name] of Object.entries(expected)) {
    const res = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body, { ...KEY, 'x-simulator-fault': `status=${status}` });
    t.equal(res.status, Number(status));
    t.same(await res.json(), { error: { code: Number(status), message: `Simulated upstream error (status ${status}).`, status: name } });
  }
});

t.test('midstream-error: two chunks, then a data: error frame, and the stream ends', async (t) => {
  const res = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body, { ...KEY, 'x-simulator-fault': 'midstream-error' });
  t.equal(res.status, 200);
  const text = await res.text();
  const chunks = sseChunks(t, text);
  t.equal(chunks.length, 3);
  t.same(chunks.slice(0, 2).map((c) => c.candidates[0].content.parts[0].text), ['Echo', ':']);
  t.ok(text.endsWith('data: {"error":{"code":500,"message":"simulated mid-stream failure","status":"INTERNAL"}}\r\n\r\n'));

  const array = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent', body, { ...KEY, 'x-simulator-fault': 'midstream-error' });
  const elements = JSON.parse(await array.text());
  t.equal(elements.length, 3);
  t.same(elements[2], { error: { code: 500, message: 'simulated mid-stream failure', status: 'INTERNAL' } });
});

t.test('truncate: two chunks, then the connection drops', async (t) => {
  const res = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body, { ...KEY, 'x-simulator-fault': 'truncate' });
  const { text, failed } = await readToCut(res);
  t.ok(failed);
  t.equal(sseChunks(t, text).length, 2);
  t.notMatch(text, /finishReason/);
});
