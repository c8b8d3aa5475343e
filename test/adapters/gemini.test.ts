// The gemini adapter: usage from the last usageMetadata, finishReason as the end, error frames, modelVersion rewrite, Google envelopes, list shape.
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { gemini as format } from '../../adapters/gemini/index.ts';
import { fakeCtx, framesOf, scan, schemaAccepts } from './helpers.ts';

// Google's serializer style (docs/wire-formats.md#gemini-stream), CRLF frames, no event lines.
const frame = (json: string) => `data: ${json}\r\n\r\n`;
const FIRST = '{"candidates": [{"content": {"parts": [{"text": "It\'s"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 30,"totalTokenCount": 30},"modelVersion": "gemini-2.5-flash","responseId": "r1"}';
const MIDDLE = '{"candidates": [{"content": {"parts": [{"text": " 21°C"}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash","responseId": "r1"}';
const LAST = '{"candidates": [{"content": {"parts": [{"text": " and sunny."}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 30,"candidatesTokenCount": 9,"thoughtsTokenCount": 120,"totalTokenCount": 159},"modelVersion": "gemini-2.5-flash","responseId": "r1"}';
const STREAM = frame(FIRST) + frame(MIDDLE) + frame(LAST);
const PATH = '/v1beta/models/gemini-2.5-flash:streamGenerateContent';

t.test('usage from a non-stream body: output is candidates plus thoughts', async (t) => {
  // The response of docs/wire-formats.md#gemini-response.
  t.strictSame(format.usageFromBody({ candidates: [], modelVersion: 'gemini-2.5-flash', usageMetadata: {
    promptTokenCount: 30, candidatesTokenCount: 9, thoughtsTokenCount: 120, totalTokenCount: 159, cachedContentTokenCount: 0,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: 30 }],
  } }), { input: 30, cacheRead: 0, cacheWrite: 0, output: 129, reasoning: 120 });
  t.strictSame(format.usageFromBody({ usageMetadata: { promptTokenCount: 1000, cachedContentTokenCount: 600, toolUsePromptTokenCount: 50, candidatesTokenCount: 20, totalTokenCount: 1070 } }),
    { input: 1050, cacheRead: 600, cacheWrite: 0, output: 20, reasoning: 0 }, 'cached content stays inside the prompt; tool-use prompt is added');
  t.equal(format.usageFromBody({ totalTokens: 31 }), undefined, 'a countTokens answer is not usage');
  // streamGenerateContent without alt=sse answers one JSON array: the last usageMetadata counts.
  t.strictSame(format.usageFromBody([JSON.parse(FIRST), JSON.parse(MIDDLE), JSON.parse(LAST)]), { input: 30, cacheRead: 0, cacheWrite: 0, output: 129, reasoning: 120 });
  t.strictSame(format.usageFromBody([JSON.parse(FIRST), JSON.parse(MIDDLE)]), { input: 30, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
});

t.test('the spec stream: usage from the last usageMetadata, terminal at the finishReason chunk, bytes untouched', async (t) => {
  const { scanner, out } = scan(format, fakeCtx({ path: PATH }), STREAM);
  t.equal(out, STREAM);
  t.strictSame(scanner.usage(), { input: 30, cacheRead: 0, cacheWrite: 0, output: 129, reasoning: 120 });
  t.equal(scanner.terminal(), true);
  t.equal(scanner.error(), undefined);
});

t.test('usage is the last one seen, never a sum; a chunk without usage keeps the previous one', async (t) => {
  const growing = (n: number) => `{"candidates": [{"content": {"parts": [{"text": "x"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 30,"candidatesTokenCount": ${n},"totalTokenCount": ${30 + n}},"modelVersion": "gemini-2.5-flash"}`;
  const { scanner } = scan(format, fakeCtx(), frame(growing(3)) + frame(growing(6)) + frame(MIDDLE));
  t.strictSame(scanner.usage(), { input: 30, cacheRead: 0, cacheWrite: 0, output: 6, reasoning: 0 });
  t.equal(scanner.terminal(), false, 'no finishReason yet: a close here is a cut stream');
});

t.test('a text that mentions the key names is not mistaken for them', async (t) => {
  const tricky = '{"candidates": [{"content": {"parts": [{"text": "say \\"finishReason\\" and \\"error\\" and \\"usageMetadata\\""}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash"}';
  const { scanner } = scan(format, fakeCtx(), frame(FIRST) + frame(tricky));
  t.equal(scanner.terminal(), false);
  t.equal(scanner.error(), undefined);
  t.equal(scanner.usage()?.input, 30);
});

t.test('an error object frame mid-stream is an error', async (t) => {
  const upstream = frame(FIRST) + frame('{"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}');
  const { scanner, out } = scan(format, fakeCtx(), upstream);
  t.equal(out, upstream);
  t.equal(scanner.error(), 'The model is overloaded.');
  t.equal(scanner.terminal(), false);
  t.equal(scanner.usage()?.input, 30);
});

t.test('an alias rewrites modelVersion in every chunk, keeping CRLF frames', async (t) => {
  const { scanner, out } = scan(format, fakeCtx({ model: 'gemini-fast', upstreamModel: 'gemini-2.5-flash' }), STREAM);
  const frames = framesOf(out);
  t.equal(frames.length, 3);
  for (const f of frames) {
    t.equal(JSON.parse(f.data).modelVersion, 'gemini-fast');
    t.equal(f.event, undefined, 'no event line');
    t.ok(f.raw.endsWith('\r\n\r\n') && !/[^\r]\n/.test(f.raw), 'CRLF only');
  }
  t.equal(JSON.parse(frames[1].data).candidates[0].content.parts[0].text, ' 21°C');
  t.equal(scanner.usage()?.output, 129);
  t.equal(scanner.terminal(), true);

  const lf = scan(format, fakeCtx({ model: 'gemini-fast', upstreamModel: 'gemini-2.5-flash' }), `data: ${FIRST}\n\n`).out;
  t.equal(lf, `data: ${JSON.stringify({ ...JSON.parse(FIRST), modelVersion: 'gemini-fast' })}\n\n`, 'LF frames stay LF');

  const body = JSON.parse(LAST);
  format.setModel(body, 'gemini-fast');
  t.equal(body.modelVersion, 'gemini-fast');
  const array = [JSON.parse(FIRST), JSON.parse(LAST)];
  format.setModel(array as unknown as Record<string, unknown>, 'gemini-fast');
  t.strictSame(array.map((c) => c.modelVersion), ['gemini-fast', 'gemini-fast'], 'the streamed-array form too');
});

t.test('the method in the path decides streaming', async (t) => {
  t.equal(format.isStream(undefined, fakeCtx({ path: PATH + '?alt=sse' })), true);
  t.equal(format.isStream(undefined, fakeCtx({ path: PATH })), true);
  t.equal(format.isStream(undefined, fakeCtx({ path: '/v1/models/gemini-2.5-flash%3AstreamGenerateContent' })), true);
  t.equal(format.isStream({ stream: true }, fakeCtx({ path: '/v1beta/models/gemini-2.5-flash:generateContent' })), false);
  t.equal(format.isStream(undefined, fakeCtx({ path: '/v1beta/models/gemini-2.5-flash:countTokens' })), false);
  t.strictSame(format.model, { param: 'model' });
  t.equal(format.upstreamAuth, 'x-goog-api-key');
});

t.test('errors use the Google envelope, with the gateway code as an ErrorInfo reason', async (t) => {
  const cases: Array<[number, string]> = [[400, 'INVALID_ARGUMENT'], [401, 'UNAUTHENTICATED'], [403, 'PERMISSION_DENIED'], [404, 'NOT_FOUND'],
    [413, 'INVALID_ARGUMENT'], [422, 'INVALID_ARGUMENT'], [429, 'RESOURCE_EXHAUSTED'], [500, 'INTERNAL'], [502, 'UNAVAILABLE'],
    [503, 'UNAVAILABLE'], [504, 'DEADLINE_EXCEEDED'], [507, 'INTERNAL']];
  for (const [status, name] of cases) {
    t.strictSame(format.errorBody(new GatewayError(status, 'model_not_found', `status ${status}`), { id: 'req_7' }), { error: {
      code: status, message: `status ${status}`, status: name,
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'model_not_found', domain: 'gateway', metadata: { request_id: 'req_7' } }],
    } }, `${status}`);
  }
});

t.test('a cut stream ends with a data-only error frame, which the same parser reads', async (t) => {
  const text = format.streamError(new GatewayError(502, 'upstream_stream_truncated', 'The upstream stream ended before it completed'));
  t.ok(text.startsWith('data: {"error":'), 'data-only, no event line');
  t.ok(text.endsWith('}\r\n\r\n'));
  const frames = framesOf(text);
  t.equal(frames.length, 1);
  t.equal(frames[0].event, undefined);
  t.strictSame(JSON.parse(frames[0].data), { error: {
    code: 502, message: 'The upstream stream ended before it completed', status: 'UNAVAILABLE',
    details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'upstream_stream_truncated', domain: 'gateway' }],
  } });
  // The scanner of a gateway in front of this one would see it as a failure too.
  t.equal(scan(format, fakeCtx(), text).scanner.error(), 'The upstream stream ended before it completed');
});

t.test('no keepalive, Gemini list shape, request shape', async (t) => {
  t.equal(format.keepalive, null);
  const model = {
    name: 'models/gemini-2.5-flash', version: '001', displayName: 'gemini-2.5-flash', description: 'gemini-2.5-flash, served through the gateway',
    inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedGenerationMethods: ['generateContent', 'countTokens'],
  };
  t.strictSame(format.modelList!([{ id: 'gemini-2.5-flash', owner: 'gemini' }]), { models: [model] });
  t.strictSame(format.modelInfo!({ id: 'gemini-2.5-flash', owner: 'gemini' }), model);
  t.ok(schemaAccepts(format, { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }));
  t.ok(schemaAccepts(format, { generateContentRequest: { contents: [] } }), 'countTokens\' other form');
  t.notOk(schemaAccepts(format, { contents: 'Hi' }));
});

t.test('embeddings: usageMetadata is the prompt; a batch and a body naming a model are sent for the path\'s upstream model', async (t) => {
  t.strictSame(format.usageFromBody({ embeddings: [{ values: [0.1] }], usageMetadata: { promptTokenCount: 5, promptTokenDetails: [{ modality: 'TEXT', tokenCount: 5 }] } }),
    { input: 5, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
  t.equal(format.usageFromBody({ embedding: { values: [0.1] } }), undefined, 'older models report none');
  const ctx = fakeCtx({ model: 'embed', upstreamModel: 'gemini-embedding-2' });
  const batch = { requests: [{ model: 'models/embed', content: {} }, { model: 'models/gemini-embedding-2', content: {} }, { content: {} }] };
  t.equal(format.prepareUpstream!(batch, ctx), true);
  t.same(batch.requests.map((r) => r.model), ['models/gemini-embedding-2', 'models/gemini-embedding-2', 'models/gemini-embedding-2']);
  t.equal(format.prepareUpstream!(batch, ctx), false, 'nothing left to change');
  const one: Record<string, unknown> = { model: 'models/other', content: {} };
  t.equal(format.prepareUpstream!(one, ctx), true);
  t.equal(one.model, 'models/gemini-embedding-2');
  const generate: Record<string, unknown> = { contents: [] };
  t.equal(format.prepareUpstream!(generate, ctx), false, 'a body naming no model is left alone (generateContent stays byte for byte)');
  t.same(generate, { contents: [] });
});

t.test('model list upstream: Google\'s pages, ids without "models/", malformed names dropped', async (t) => {
  const list = format.modelListUpstream!;
  t.equal(list.path, '/v1beta/models?pageSize=1000');
  t.same(list.page({ models: [{ name: 'models/gemini-2.5-flash' }, { name: 'models/bad name' }, { name: 7 }], nextPageToken: 'a+b' }),
    { ids: ['gemini-2.5-flash'], next: '/v1beta/models?pageSize=1000&pageToken=a%2Bb' });
  t.same(list.page({ models: [{ name: 'models/gemini-2.5-pro' }] }), { ids: ['gemini-2.5-pro'], next: undefined });
  t.same(list.page(null), { ids: [], next: undefined });
});
