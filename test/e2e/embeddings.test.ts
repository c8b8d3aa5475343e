// End to end: embeddings through the official SDKs on the shipped gateway.yaml: `openai.embeddings.create` (base64 by
// default, and float) and `@google/genai` `models.embedContent` (batchEmbedContents, v1 and v1beta; raw :embedContent),
// with the ledger holding exactly the simulator's token counts at the shipped prices. Then the refusals and aliasing of
// a small config: embeddings on a platform that has none, a batch naming another model, an alias.
import t from 'tap';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { withGateway, withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_KEY, logLine, rejection, rid, SHIPPED_CONFIG, usage } from '../helpers/e2e.ts';
import { bearer, expectOpenAIError, post } from '../helpers/http.ts';
import { vectorOf } from '../../simulator/vectors.ts';

const ADMIN = 'admin-token-for-embeddings-0123456789';
const { gateway, requests } = await withLoggedGateway(t, SHIPPED_CONFIG, { GATEWAY_ADMIN_TOKEN: ADMIN });
const sim = gateway.simulators.demo;
const last = () => sim.requests[sim.requests.length - 1];
const openai = new OpenAI({ apiKey: DEMO_KEY, baseURL: gateway.url + '/v1', maxRetries: 0 });
const genai = (apiVersion?: string) => new GoogleGenAI({ apiKey: DEMO_KEY, httpOptions: { baseUrl: gateway.url, ...(apiVersion ? { apiVersion } : {}) } });

/** The ledger's records of one model (newest first), as the admin API lists them. */
async function ledger(model: string): Promise<{ input_tokens: number; output_tokens: number; cost: number; route: string; ending: string }[]> {
  const res = await fetch(`${gateway.url}/admin/usage?model=${model}`, { headers: bearer(ADMIN) });
  return ((await res.json()) as { records: never[] }).records;
}

// Simulator tokens: "Hello there" = 2, "How are you?" = 4 (words and each punctuation mark).
const INPUTS = ['Hello there', 'How are you?'];
const TOKENS = 6;

t.test('openai.embeddings.create: base64 by default, decoded by the SDK; usage metered at the shipped price', async (t) => {
  const id = rid('embed');
  const res = await openai.embeddings.create({ model: 'text-embedding-3-small', input: INPUTS }, { headers: { 'x-request-id': id } });
  t.equal(res.data.length, 2);
  // The SDK asked for base64 and decoded float32s: equal to the simulator's vectors at float32 precision.
  t.same(res.data[0].embedding.map((v) => Math.fround(v)), vectorOf(INPUTS[0]).map((v) => Math.fround(v)));
  t.same(res.usage, { prompt_tokens: TOKENS, total_tokens: TOKENS });
  t.equal(res.model, 'text-embedding-3-small');
  t.equal(last().path, '/v1/embeddings');
  t.equal((last().json as { encoding_format: string }).encoding_format, 'base64', 'the SDK\'s own request, relayed unchanged');
  const line = await logLine(requests, id);
  t.equal(line.route, '/v1/embeddings');
  t.equal(line.stream, false);
  t.same(line.usage, usage(TOKENS, 0));

  const float = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'How are you?', encoding_format: 'float', dimensions: 4 });
  t.same(float.data[0].embedding, vectorOf('How are you?', 4), 'float vectors exactly');
  t.same(float.usage, { prompt_tokens: 4, total_tokens: 4 });

  const records = await ledger('text-embedding-3-small');
  t.same(records.map((r) => [r.input_tokens, r.output_tokens, r.ending]), [[4, 0, 'completed'], [TOKENS, 0, 'completed']]);
  t.same(records.map((r) => r.cost), [4 * 0.02 / 1e6, TOKENS * 0.02 / 1e6], 'text-embedding-3-small at 0.02 USD per 1M input tokens');
});

for (const apiVersion of ['v1beta', undefined]) {
  t.test(`@google/genai models.embedContent (${apiVersion ?? 'SDK default v1'}): batchEmbedContents, usageMetadata metered`, async (t) => {
    const ai = genai(apiVersion);
    const before = (await ledger('gemini-embedding-2')).length;
    // The SDK sends gemini-embedding-2 a list as one content of several parts (one vector), as that model fuses them.
    const res = await ai.models.embedContent({ model: 'gemini-embedding-2', contents: INPUTS, config: { outputDimensionality: 4 } });
    t.same(res.embeddings?.map((e) => e.values), [vectorOf(INPUTS.join(' '), 4)]);
    t.same(res.usageMetadata, { promptTokenCount: TOKENS, promptTokenDetails: [{ modality: 'TEXT', tokenCount: TOKENS }] });
    t.equal(last().path, '/v1beta/models/gemini-embedding-2:batchEmbedContents', 'relayed under v1beta');
    t.same((last().json as { requests: { model: string }[] }).requests.map((r) => r.model), ['models/gemini-embedding-2']);
    const records = await ledger('gemini-embedding-2');
    t.equal(records.length, before + 1);
    t.match(records[0], { input_tokens: TOKENS, output_tokens: 0, cost: TOKENS * 0.2 / 1e6, ending: 'completed' });

    // gemini-embedding-001 takes a list as a batch: one vector each, and (like Google's) no usageMetadata.
    const batch = await ai.models.embedContent({ model: 'gemini-embedding-001', contents: INPUTS });
    t.same(batch.embeddings?.map((e) => e.values), INPUTS.map((text) => vectorOf(text)));
    t.equal(batch.usageMetadata, undefined);
    t.same((last().json as { requests: { model: string }[] }).requests.map((r) => r.model), ['models/gemini-embedding-001', 'models/gemini-embedding-001']);
    t.match((await ledger('gemini-embedding-001'))[0], { input_tokens: 0, output_tokens: 0, cost: 0, ending: 'completed' }, 'recorded, nothing estimated');
  });
}

t.test(':embedContent (one content) relayed natively; a model that reports no usage is recorded with 0 tokens and counted', async (t) => {
  const res = await post(`${gateway.url}/v1beta/models/gemini-embedding-001:embedContent`, { content: { parts: [{ text: 'Hello there' }] } }, { 'x-goog-api-key': DEMO_KEY });
  t.equal(res.status, 200);
  t.same(await res.json(), { embedding: { values: vectorOf('Hello there') } }, 'gemini-embedding-001 answers no usageMetadata, as Google\'s does');
  t.equal(last().path, '/v1beta/models/gemini-embedding-001:embedContent');
  t.match((await ledger('gemini-embedding-001'))[0], { input_tokens: 0, output_tokens: 0, cost: 0, ending: 'completed', route: '/v1beta/models/{model}:embedContent' }, 'nothing estimated');
  const metrics = await (await fetch(gateway.url + '/metrics')).text();
  t.match(metrics, /gateway_usage_unreported_total\{route="\/v1beta\/models\/\{model\}:embedContent",model="gemini-embedding-001"\} 1\n/);
  t.match(metrics, /gateway_usage_unreported_total\{route="\/v1beta\/models\/\{model\}:batchEmbedContents",model="gemini-embedding-001"\} 1\n/);
  t.match(metrics, /gateway_usage_unreported_total\{route="\/v1\/models\/\{model\}:batchEmbedContents",model="gemini-embedding-001"\} 1\n/);
  t.notMatch(metrics, /gateway_usage_unreported_total\{[^}]*model="(text-embedding-3-small|gemini-embedding-2)"/, 'the models that report usage are not counted');
  const two = await genai('v1beta').models.embedContent({ model: 'gemini-embedding-2', contents: 'How are you?' });
  t.same(two.usageMetadata?.promptTokenCount, 4);
});

t.test('what a small config shows: a platform without embeddings, an alias, a batch naming another model', async (t) => {
  const gw = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
platforms:
  sim: { simulator: true }
  claude: { simulator: true, format: anthropic-messages }
groups:
  main:
    platform: sim
    models: [gemini-embedding-2, gemini-embedding-001]
    model_map: { embed: gemini-embedding-2 }
    accounts: [{ id: a1, credential: c1 }]
  claude:
    platform: claude
    models: ["*"]
    accounts: [{ id: c1, credential: c2 }]
keys:
  - { id: k, key: sk-embed-0001, group: main }
  - { id: c, key: sk-claude-0001, group: claude }
pricing:
  gemini-embedding-2: { input: 0.2 }
pipelines:
  relay: [auth, group-check, model-allowlist, metering, proxy]
routes:
  - { method: POST, path: /v1/embeddings, format: openai-embeddings, pipeline: relay }
  - { method: POST, path: "/v1beta/models/{model}:batchEmbedContents", format: gemini, pipeline: relay }
`);
  const upstream = gw.simulators.sim;
  const refused = await post(gw.url + '/v1/embeddings', { model: 'x', input: 'hi' }, bearer('sk-claude-0001'));
  await expectOpenAIError(t, refused, 404, 'EMBEDDINGS_NOT_SUPPORTED', 'invalid_request_error');
  t.equal(gw.simulators.claude.requests.length, 0);

  const err = await rejection(new OpenAI({ apiKey: 'sk-embed-0001', baseURL: gw.url + '/v1', maxRetries: 0 }).embeddings.create({ model: 'text-embedding-3-small', input: 'hi' }));
  t.ok(err instanceof OpenAI.NotFoundError, 'a model outside the group: 404 model_not_found');

  // The alias in the path and in each request becomes the upstream model.
  const ai = new GoogleGenAI({ apiKey: 'sk-embed-0001', httpOptions: { baseUrl: gw.url, apiVersion: 'v1beta' } });
  const aliased = await ai.models.embedContent({ model: 'embed', contents: ['Hello there'] });
  t.same(aliased.usageMetadata?.promptTokenCount, 2);
  const sent = upstream.requests.at(-1)!;
  t.equal(sent.path, '/v1beta/models/gemini-embedding-2:batchEmbedContents');
  t.same((sent.json as { requests: { model: string }[] }).requests.map((r) => r.model), ['models/gemini-embedding-2']);

  // A batch whose requests name another model is sent for the model of its path: the one checked and billed.
  const mixed = await post(gw.url + '/v1beta/models/gemini-embedding-2:batchEmbedContents', {
    requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'Hello there' }] } }, { content: { parts: [{ text: 'How are you?' }] } }],
  }, { 'x-goog-api-key': 'sk-embed-0001' });
  t.equal(mixed.status, 200);
  t.same(((await mixed.json()) as { usageMetadata: { promptTokenCount: number } }).usageMetadata.promptTokenCount, TOKENS);
  t.same((upstream.requests.at(-1)!.json as { requests: { model: string }[] }).requests.map((r) => r.model), ['models/gemini-embedding-2', 'models/gemini-embedding-2']);
});
