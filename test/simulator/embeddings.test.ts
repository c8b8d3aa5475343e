// The simulator's embeddings: OpenAI's /v1/embeddings (float and base64, token-id inputs, usage) and Gemini's :embedContent
// and :batchEmbedContents (usageMetadata from the gemini-embedding-2 family only, one model per batch), with exact numbers.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { base64Of, vectorOf } from '../../simulator/vectors.ts';
import { postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

t.test('vectors: deterministic unit vectors of the asked size', async (t) => {
  t.same(vectorOf('Hello there'), vectorOf('Hello there'));
  t.not(vectorOf('Hello there')[0], vectorOf('Hello there!')[0]);
  for (const size of [1, 4, 8, 40]) {
    const v = vectorOf('x', size);
    t.equal(v.length, size);
    t.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, `${size}: unit length`);
  }
  const bytes = Buffer.from(base64Of([0.5, -0.25]), 'base64');
  t.same([...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)], [0.5, -0.25], 'base64: little-endian float32s');
});

t.test('POST /v1/embeddings: float and base64, strings and token ids, usage of the prompt', async (t) => {
  const res = await postJson(sim, '/v1/embeddings', { model: 'text-embedding-3-small', input: ['Hello there', [1, 2, 3]], encoding_format: 'float', dimensions: 4 });
  t.equal(res.status, 200);
  t.same(await res.json(), {
    object: 'list', model: 'text-embedding-3-small',
    data: [{ object: 'embedding', index: 0, embedding: vectorOf('Hello there', 4) }, { object: 'embedding', index: 1, embedding: vectorOf('1 2 3', 4) }],
    usage: { prompt_tokens: 2 + 3, total_tokens: 5 },
  });
  const b64 = await (await postJson(sim, '/v1/embeddings', { model: 'm', input: 'How are you?', encoding_format: 'base64' })).json();
  t.equal(b64.data[0].embedding, base64Of(vectorOf('How are you?')));
  t.same(b64.usage, { prompt_tokens: 4, total_tokens: 4 });
  for (const [body, param] of [[{ input: 'x' }, 'model'], [{ model: 'm' }, 'input'], [{ model: 'm', input: [] }, 'input'], [{ model: 'm', input: 'x', dimensions: 0 }, 'dimensions'], [{ model: 'm', input: 'x', encoding_format: 'hex' }, 'encoding_format']] as const) {
    const bad = await postJson(sim, '/v1/embeddings', body);
    t.equal(bad.status, 400, JSON.stringify(body));
    t.equal((await bad.json()).error.param, param);
  }
});

t.test('Gemini :embedContent and :batchEmbedContents', async (t) => {
  const content = (text: string) => ({ parts: [{ text }] });
  const two = await postJson(sim, '/v1beta/models/gemini-embedding-2:embedContent', { content: content('Hello there'), outputDimensionality: 3 });
  t.same(await two.json(), { embedding: { values: vectorOf('Hello there', 3) }, usageMetadata: { promptTokenCount: 2, promptTokenDetails: [{ modality: 'TEXT', tokenCount: 2 }] } });
  const old = await postJson(sim, '/v1/models/gemini-embedding-001:embedContent', { content: content('Hello there') });
  t.same(await old.json(), { embedding: { values: vectorOf('Hello there') } }, 'no usage from the older model, under v1 too');

  const batch = await postJson(sim, '/v1beta/models/gemini-embedding-2:batchEmbedContents', {
    requests: [{ model: 'models/gemini-embedding-2', content: content('Hello there') }, { model: 'models/gemini-embedding-2', content: content('How are you?') }],
  });
  t.same(await batch.json(), {
    embeddings: [{ values: vectorOf('Hello there') }, { values: vectorOf('How are you?') }],
    usageMetadata: { promptTokenCount: 6, promptTokenDetails: [{ modality: 'TEXT', tokenCount: 6 }] },
  });
  const mismatch = await postJson(sim, '/v1beta/models/gemini-embedding-2:batchEmbedContents', { requests: [{ model: 'models/gemini-embedding-001', content: content('x') }] });
  t.equal(mismatch.status, 400, 'a batch request naming another model is refused');
  t.match((await mismatch.json()).error, { code: 400, status: 'INVALID_ARGUMENT' });
  const generative = await postJson(sim, '/v1beta/models/gemini-2.5-flash:embedContent', { content: content('x') });
  t.equal(generative.status, 404, 'a generative model does not embed');
  const empty = await postJson(sim, '/v1beta/models/gemini-embedding-2:embedContent', { content: { parts: [] } });
  t.equal(empty.status, 400);
});
