// End to end with the official `@google/genai` SDK on the shipped gateway.yaml, with apiVersion v1beta and with the SDK's
// default (v1): generateContent, generateContentStream, countTokens, the Gemini model list and lookup, the /antigravity
// Gemini entries, mid-stream failures, and ?key= (accepted, never forwarded).
import t from 'tap';
import { ApiError, GoogleGenAI, type GenerateContentResponse, type Model } from '@google/genai';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_ACCOUNT, DEMO_KEY, logLine, rejection, rid, sentCredential, SHIPPED_CONFIG, surfaces, usage } from '../helpers/e2e.ts';

const { gateway, requests } = await withLoggedGateway(t, SHIPPED_CONFIG);
const sim = gateway.simulators.demo;
const agSim = gateway.simulators['demo-antigravity'];
const genai = (baseUrl: string, apiVersion?: string) =>
  new GoogleGenAI({ apiKey: DEMO_KEY, httpOptions: { baseUrl, ...(apiVersion === undefined ? {} : { apiVersion }) } });
const v1beta = genai(gateway.url, 'v1beta');
const v1 = genai(gateway.url);
const last = () => sim.requests[sim.requests.length - 1];
/** Per-request headers travel in config.httpOptions: a request id to find the log line, and simulator faults. */
const headers = (id: string, extra: Record<string, string> = {}) => ({ httpOptions: { headers: { 'x-request-id': id, ...extra } } });

// Simulator (Gemini): promptTokenCount = Σ over systemInstruction and each content of (3 + tokens) + 3.
// "Be brief." = 3 tokens, "What is 2 + 2?" = 6 → 3 + 6 + 9 = 18; reply "Echo: What is 2 + 2?" = 8 tokens.
const MODEL = 'gemini-2.5-flash';
const request = (id: string) => ({ model: MODEL, contents: 'What is 2 + 2?', config: { systemInstruction: 'Be brief.', ...headers(id) } });
const hello = (id: string, fault: string) => ({ model: MODEL, contents: 'Hello there', config: headers(id, { 'x-simulator-fault': fault }) });
const REPLY = 'Echo: What is 2 + 2?';
const USAGE_METADATA = { promptTokenCount: 18, candidatesTokenCount: 8, totalTokenCount: 26 };
// Streamed a token per chunk; every chunk but the last carries provisional usage without candidates.
const PIECES = ['Echo', ':', ' What', ' is', ' 2', ' +', ' 2', '?'];

// The model object the SDK builds from the gateway's Gemini-shape entry.
const sdkModel = (id: string) => ({
  name: `models/${id}`, displayName: id, description: `${id}, served through the gateway`, version: '001', tunedModelInfo: {},
  inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedActions: ['generateContent', 'countTokens'],
});
// The demo platform serves every vendor: a Gemini list shows the upstream's Gemini list (gemini-* matches all of it), not
// the group's OpenAI and Anthropic models.
const DEMO_MODELS = ['gemini-2.0-flash', 'gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-embedding-001', 'gemini-embedding-2'];
const LIST_ASKS = ['GET /v1/models', 'GET /v1/models?limit=1000', 'GET /v1beta/models?pageSize=1000'];

async function listAll(ai: GoogleGenAI): Promise<Model[]> {
  const models: Model[] = [];
  for await (const model of await ai.models.list()) models.push(model);
  return models;
}

for (const [label, ai, prefix] of [['v1beta', v1beta, '/v1beta'], ['SDK default (v1)', v1, '/v1']] as const) {
  t.test(`${label}: generateContent, exact usageMetadata on the SDK object and in the log`, async (t) => {
    const id = rid('gem');
    const res = await ai.models.generateContent(request(id));
    t.equal(res.text, REPLY);
    t.equal(res.candidates?.[0].finishReason, 'STOP');
    t.equal(res.modelVersion, MODEL);
    t.same(res.usageMetadata, USAGE_METADATA);
    t.equal(last().path, `/v1beta/models/${MODEL}:generateContent`, 'relayed upstream under v1beta');
    t.same(last().json, { contents: [{ parts: [{ text: 'What is 2 + 2?' }], role: 'user' }], systemInstruction: { parts: [{ text: 'Be brief.' }], role: 'user' }, generationConfig: {} }, 'the SDK body, unchanged');
    const line = await logLine(requests, id);
    t.equal(line.route, `${prefix}/models/{model}:generateContent`);
    t.equal(line.outcome, 'completed');
    t.equal(line.model, MODEL);
    t.same(line.usage, usage(18, 8));
  });

  t.test(`${label}: generateContentStream, chunks concatenate to the reply, final usage exact`, async (t) => {
    const id = rid('gem-stream');
    const chunks: GenerateContentResponse[] = [];
    for await (const chunk of await ai.models.generateContentStream(request(id))) chunks.push(chunk);
    t.same(chunks.map((c) => c.text), PIECES);
    t.equal(chunks.map((c) => c.text).join(''), REPLY);
    t.same(chunks.at(-1)?.usageMetadata, USAGE_METADATA);
    t.equal(chunks.at(-1)?.candidates?.[0].finishReason, 'STOP');
    t.ok(chunks.slice(0, -1).every((c) => c.usageMetadata?.candidatesTokenCount === undefined && c.usageMetadata?.promptTokenCount === 18), 'provisional usage before the end');
    t.equal(last().path, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    const line = await logLine(requests, id);
    t.equal(line.route, `${prefix}/models/{model}:streamGenerateContent`);
    t.equal(line.stream, true);
    t.equal(line.outcome, 'completed');
    t.same(line.usage, usage(18, 8), 'from the last usageMetadata');
  });

  t.test(`${label}: countTokens`, async (t) => {
    const id = rid('gem-count');
    // "Hello there" as one user content: 3 + (3 + 2) = 8.
    const counted = await ai.models.countTokens({ model: MODEL, contents: 'Hello there', config: headers(id) });
    t.equal(counted.totalTokens, 8);
    t.equal(last().path, `/v1beta/models/${MODEL}:countTokens`);
    const line = await logLine(requests, id);
    t.equal(line.route, `${prefix}/models/{model}:countTokens`);
    t.equal(line.status, 200);
  });
}

t.test('v1beta: models.list and models.get in Gemini shape, only what the key may use', async (t) => {
  const before = sim.requests.length;
  const models = await listAll(v1beta);
  t.same(models.map((m) => m.name), DEMO_MODELS.map((id) => `models/${id}`));
  t.same(models[1], sdkModel('gemini-2.5-flash'));
  t.same(sim.requests.slice(before).map((r) => `${r.method} ${r.path}`).sort(), LIST_ASKS, 'each vendor\'s list asked of the upstream once');
  const asked = sim.requests.length;
  t.same(await v1beta.models.get({ model: MODEL }), sdkModel(MODEL));
  t.same(await v1beta.models.get({ model: 'gemini-2.0-flash-lite' }), sdkModel('gemini-2.0-flash-lite'), 'a glob-allowed model can be looked up');
  const missing = await rejection(v1beta.models.get({ model: 'text-bison-001' }));
  t.ok(missing instanceof ApiError);
  t.equal((missing as ApiError).status, 404);
  t.equal(sim.requests.length, asked, 'lookups answered by the gateway itself');
});

t.test('SDK default (v1): models.list and models.get still answer in Gemini shape', async (t) => {
  // @google/genai 3.x lists with GET /v1/models and looks up with GET /v1/models/{model}; the OpenAI shape there would
  // read as an empty list and an empty model. Its x-goog-api-client header selects the Gemini shape.
  const before = sim.requests.length;
  const models = await listAll(v1);
  t.same(models.map((m) => m.name), DEMO_MODELS.map((id) => `models/${id}`));
  t.same(models[1], sdkModel('gemini-2.5-flash'));
  t.same(await v1.models.get({ model: MODEL }), sdkModel(MODEL));
  const missing = await rejection(v1.models.get({ model: 'text-bison-001' }));
  t.ok(missing instanceof ApiError);
  t.equal((missing as ApiError).status, 404);
  t.equal(sim.requests.length, before, 'a warm list and lookups: answered by the gateway itself');
  // The OpenAI SDK on the same path still gets the OpenAI shape.
  const openaiList = await fetch(gateway.url + '/v1/models', { headers: { authorization: `Bearer ${DEMO_KEY}` } });
  t.equal(((await openaiList.json()) as { object: string }).object, 'list');
});

t.test('the /antigravity Gemini entries: generate, stream and list go to the dedicated pool only', async (t) => {
  const ag = genai(gateway.url + '/antigravity', 'v1beta');
  const before = sim.requests.length;
  agSim.clear();
  const id = rid('ag-gem');
  const res = await ag.models.generateContent(request(id));
  t.equal(res.text, REPLY);
  t.same(res.usageMetadata, USAGE_METADATA);
  const line = await logLine(requests, id);
  t.equal(line.route, '/antigravity/v1beta/models/{model}:generateContent');
  t.equal(line.group, 'demo-antigravity');
  t.same(line.usage, usage(18, 8));

  const streamId = rid('ag-gem-stream');
  const texts: string[] = [];
  let final: GenerateContentResponse | undefined;
  for await (const chunk of await ag.models.generateContentStream(request(streamId))) {
    texts.push(chunk.text ?? '');
    final = chunk;
  }
  t.equal(texts.join(''), REPLY);
  t.same(final?.usageMetadata, USAGE_METADATA);
  t.same((await logLine(requests, streamId)).usage, usage(18, 8));

  const models = await listAll(ag);
  t.same(models.map((m) => m.name), DEMO_MODELS.map((id) => `models/${id}`), 'the pool\'s upstream\'s Gemini models (not its claude-sonnet-4-5)');

  t.same(agSim.requests.slice(0, 2).map((r) => r.path), [`/v1beta/models/${MODEL}:generateContent`, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`]);
  t.same(agSim.requests.slice(2).map((r) => r.path).sort(), ['/v1/models?limit=1000', '/v1beta/models?pageSize=1000'], 'the pool\'s two vendor lists');
  for (const r of agSim.requests) t.same(sentCredential(r), { credential: 'demo-antigravity-credential', headers: 1 });
  t.equal(sim.requests.length, before, 'the ordinary upstream saw none of them');
});

t.test('a mid-stream upstream error makes the SDK throw ApiError, after the chunks that arrived', async (t) => {
  const id = rid('gem-midstream');
  const texts: string[] = [];
  const err = await rejection((async () => {
    const stream = await v1beta.models.generateContentStream(hello(id, 'midstream-error'));
    for await (const chunk of stream) texts.push(chunk.text ?? '');
  })());
  t.ok(err instanceof ApiError, 'ApiError, not a short success');
  t.equal((err as ApiError).status, 500);
  t.match((err as ApiError).message, 'simulated mid-stream failure');
  t.same(texts, ['Echo', ':']);
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'failed');
  // The last usageMetadata seen was the provisional one: prompt 3 + (3 + 2) = 8, no candidates yet.
  t.same(line.usage, usage(8, 0));

  // A stream the upstream cuts ends with the gateway's own error object (502).
  const cutId = rid('gem-truncate');
  const cut = await rejection((async () => {
    const stream = await v1.models.generateContentStream(hello(cutId, 'truncate'));
    for await (const chunk of stream) void chunk;
  })());
  t.ok(cut instanceof ApiError);
  t.equal((cut as ApiError).status, 502);
  t.match((cut as ApiError).message, 'The upstream stream ended before it completed');
  t.equal((await logLine(requests, cutId)).outcome, 'missing-terminal');
});

t.test('?key= is accepted on Gemini paths (raw fetch) and never forwarded upstream', async (t) => {
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] });
  const post = (path: string) => fetch(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  const whole = await post(`/v1beta/models/${MODEL}:generateContent?key=${DEMO_KEY}`);
  t.equal(whole.status, 200);
  t.same(((await whole.json()) as { usageMetadata: unknown }).usageMetadata, { promptTokenCount: 8, candidatesTokenCount: 4, totalTokenCount: 12 });
  t.equal(last().path, `/v1beta/models/${MODEL}:generateContent`, 'the key is stripped from the query');

  const sse = await post(`/v1/models/${MODEL}:streamGenerateContent?alt=sse&key=${DEMO_KEY}`);
  t.equal(sse.status, 200);
  t.match(sse.headers.get('content-type'), /^text\/event-stream/);
  const frames = (await sse.text()).split('\r\n\r\n').filter(Boolean);
  t.equal(frames.length, 4, '"Echo: Hello there" = 4 chunks');
  t.ok(frames.every((f) => f.startsWith('data: ')), 'data-only frames, no event: lines or comments');
  t.equal(last().path, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, 'other query parameters stay');

  // Without alt=sse the stream is one JSON array; its last usageMetadata is the usage.
  const id = rid('gem-array');
  const array = await fetch(gateway.url + `/v1beta/models/${MODEL}:streamGenerateContent?key=${DEMO_KEY}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body,
  });
  t.equal(array.status, 200);
  const chunks = (await array.json()) as GenerateContentResponse[];
  t.equal(chunks.map((c) => c.candidates?.[0].content?.parts?.[0].text).join(''), 'Echo: Hello there');
  t.same((await logLine(requests, id)).usage, usage(8, 4));

  const pooled = await post(`/antigravity/v1beta/models/${MODEL}:generateContent?key=${DEMO_KEY}`);
  t.equal(pooled.status, 200);
  t.equal(agSim.requests.at(-1)?.path, `/v1beta/models/${MODEL}:generateContent`, 'stripped on the dedicated entry too');

  const counted = await post(`/v1beta/models/${MODEL}:countTokens?key=${DEMO_KEY}`);
  t.same(await counted.json(), { totalTokens: 8 });

  const listed = await fetch(gateway.url + `/v1beta/models?key=${DEMO_KEY}`);
  t.equal(listed.status, 200);
  t.equal(((await listed.json()) as { models: unknown[] }).models.length, DEMO_MODELS.length);

  const wrong = await post(`/v1beta/models/${MODEL}:generateContent?key=sk-not-a-key`);
  t.equal(wrong.status, 401);
  t.equal(((await wrong.json()) as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
});

t.test('streamGenerateContent without alt=sse streams its JSON array as it arrives', async (t) => {
  // 4 chunks 250 ms apart: the upstream takes ≥ 750 ms, its first element is ready at once.
  const init = {
    method: 'POST', body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] }),
    headers: { 'content-type': 'application/json', 'x-goog-api-key': DEMO_KEY, 'x-simulator-chunk-delay-ms': '250' },
  };
  for (const query of ['?alt=sse', '']) {
    const start = performance.now();
    const res = await fetch(gateway.url + `/v1beta/models/${MODEL}:streamGenerateContent${query}`, init);
    const reader = res.body!.getReader();
    await reader.read();
    const firstByte = performance.now() - start;
    while (!(await reader.read()).done);
    const end = performance.now() - start;
    t.ok(end >= 700, `${query || 'JSON array'}: the upstream took ${Math.round(end)} ms`);
    t.ok(firstByte < 500, `${query || 'JSON array'}: first bytes after ${Math.round(firstByte)} ms, before the upstream finished`);
  }
});

t.test('streamGenerateContent without alt=sse: an upstream failure is never a clean finish', async (t) => {
  const post = (id: string, fault: string) => fetch(gateway.url + `/v1beta/models/${MODEL}:streamGenerateContent`, {
    method: 'POST', body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }] }),
    headers: { 'content-type': 'application/json', 'x-goog-api-key': DEMO_KEY, 'x-request-id': id, 'x-simulator-fault': fault },
  });
  // Google ends a failed array stream with an error element; the client gets it as the last element.
  const id = rid('gem-array-error');
  const res = await post(id, 'midstream-error');
  t.equal(res.status, 200, 'the status was sent with the first element');
  const elements = (await res.json()) as Record<string, any>[];
  t.same(elements.map((e) => e.candidates?.[0].content.parts[0].text ?? null), ['Echo', ':', null]);
  t.same(elements.at(-1), { error: { code: 500, message: 'simulated mid-stream failure', status: 'INTERNAL' } });
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'failed');
  t.same(line.usage, usage(8, 0), 'the last usageMetadata seen');

  // A cut array never reaches the client as complete JSON.
  const cutId = rid('gem-array-cut');
  const cut = await post(cutId, 'truncate');
  const complete = await cut.text().then((text) => { try { JSON.parse(text); return true; } catch { return false; } }, () => false);
  t.equal(complete, false, 'the body is cut or the connection fails');
  t.not((await logLine(requests, cutId)).outcome, 'completed');
});

t.test('the client key never reached either upstream', async (t) => {
  const all = [...sim.requests.map((r) => ['demo', r] as const), ...agSim.requests.map((r) => ['demo-antigravity', r] as const)];
  t.ok(sim.requests.length >= 10, `${all.length} upstream requests to inspect`);
  for (const [name, r] of all) {
    t.notOk(surfaces(r).some((s) => s.includes(DEMO_KEY)), `${name} ${r.method} ${r.path}: no client key in path, body or headers`);
    t.notMatch(r.path, /[?&]key=/, `${name} ${r.path}: no key in the query`);
    const sent = sentCredential(r);
    t.equal(sent.headers, 1, 'one credential header');
    t.match(sent.credential, name === 'demo' ? DEMO_ACCOUNT : /^demo-antigravity-credential$/, 'an account\'s credential');
  }
});
