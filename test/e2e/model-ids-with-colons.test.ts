// Model ids with colons (fine-tuned "ft:base:org::id") through the official SDKs on the shipped routes: lookup, chat, allow-list
// globs, while the Gemini ":generateContent" routes under the same /v1/models/ prefix keep their requests.
import { readFileSync } from 'node:fs';
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { DEMO_KEY, rejection, SHIPPED_CONFIG } from '../helpers/e2e.ts';

const FT = 'ft:gpt-4o-mini:org::abc123';
const OTHER_FT = 'ft:gpt-4o:org::xyz789'; // not allowed: the glob below names gpt-4o-mini fine-tunes only

// The shipped gateway.yaml, with the demo group also serving gpt-4o-mini fine-tunes by a glob.
const shipped = readFileSync(SHIPPED_CONFIG, 'utf8');
const DEMO_MODELS = 'models: [gpt-4o-mini, gpt-5,';
t.ok(shipped.includes(DEMO_MODELS), 'the shipped demo group is where the test expects it');
const gw = await withGateway(t, shipped.replace(DEMO_MODELS, 'models: ["ft:gpt-4o-mini:*", gpt-4o-mini, gpt-5,'));
const sim = gw.simulators.demo;
const openai = new OpenAI({ apiKey: DEMO_KEY, baseURL: gw.url + '/v1', maxRetries: 0 });

t.test('models.retrieve of a fine-tuned id: GET /v1/models/ft:... answered by the gateway', async (t) => {
  const before = sim.requests.length;
  const one = await openai.models.retrieve(FT);
  t.equal(one.id, FT);
  t.equal(one.object, 'model');
  const missing = await rejection(openai.models.retrieve(OTHER_FT));
  t.ok(missing instanceof OpenAI.NotFoundError, 'a fine-tune the globs do not allow is a 404');
  t.equal((missing as InstanceType<typeof OpenAI.NotFoundError>).code, 'model_not_found', 'refused by the key\'s models, not by the router');
  t.equal(sim.requests.length, before, 'lookups never reach the upstream');
});

t.test('the percent-encoded form of the id is the same model', async (t) => {
  const res = await fetch(`${gw.url}/v1/models/${encodeURIComponent(FT)}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
  t.equal(res.status, 200);
  t.equal((await res.json() as { id: string }).id, FT);
  const raw = await fetch(`${gw.url}/v1/models/${FT}`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
  t.equal(raw.status, 200, 'and the raw colons');
  t.equal((await raw.json() as { id: string }).id, FT);
});

t.test('Anthropic SDK: models.retrieve of an id with colons, in Anthropic shape', async (t) => {
  const anthropic = new Anthropic({ apiKey: DEMO_KEY, baseURL: gw.url, maxRetries: 0 });
  t.same(await anthropic.models.retrieve(FT), { type: 'model', id: FT, display_name: FT, created_at: '2024-01-01T00:00:00Z' });
  t.ok(await rejection(anthropic.models.retrieve(OTHER_FT)) instanceof Anthropic.NotFoundError);
});

t.test('chat completion with a fine-tuned model: routed, allowed by the glob, relayed unchanged', async (t) => {
  sim.clear();
  const reply = await openai.chat.completions.create({ model: FT, messages: [{ role: 'user', content: 'Hello' }] });
  t.equal(reply.choices[0].message.content, 'Echo: Hello');
  t.equal(sim.requests.length, 1);
  t.equal((sim.requests[0].json as { model: string }).model, FT, 'the upstream is asked for the fine-tuned id itself');
  const refused = await rejection(openai.chat.completions.create({ model: OTHER_FT, messages: [{ role: 'user', content: 'Hello' }] }));
  t.ok(refused instanceof OpenAI.NotFoundError);
  t.equal((refused as InstanceType<typeof OpenAI.NotFoundError>).code, 'model_not_found');
  t.equal(sim.requests.length, 1, 'the refused model never went upstream');
});

t.test('Gemini :generateContent under /v1/models and /v1beta/models still reaches the Gemini routes', async (t) => {
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] });
  for (const prefix of ['/v1', '/v1beta']) {
    sim.clear();
    const res = await fetch(`${gw.url}${prefix}/models/gemini-2.5-flash:generateContent`, {
      method: 'POST', headers: { 'x-goog-api-key': DEMO_KEY, 'content-type': 'application/json' }, body,
    });
    t.equal(res.status, 200, `${prefix}: answered`);
    const json = await res.json() as { candidates: Array<{ content: { parts: Array<{ text: string }> } }> };
    t.equal(json.candidates[0].content.parts[0].text, 'Echo: Hello');
    t.equal(sim.requests[0]?.path, '/v1beta/models/gemini-2.5-flash:generateContent', `${prefix}: relayed to the Gemini method`);
  }
  const colons = await fetch(`${gw.url}/v1/models/${FT}:generateContent`, {
    method: 'POST', headers: { 'x-goog-api-key': DEMO_KEY, 'content-type': 'application/json' }, body,
  });
  t.equal(colons.status, 405, 'the Gemini {model} stops at the first colon, so only the GET lookup takes this path');
  t.equal(colons.headers.get('allow'), 'GET');
  await colons.arrayBuffer();
  const lookup = await fetch(`${gw.url}/v1/models/gemini-2.5-flash:generateContent`, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
  t.equal(lookup.status, 405, 'a GET on a Gemini method path is not a lookup of a model named "gemini-2.5-flash:generateContent"');
  t.equal(lookup.headers.get('allow'), 'POST');
  await lookup.arrayBuffer();
});

t.test('a {name*} capture fills upstream_path, aliased by model_map too', async (t) => {
  const config = demoConfig(
    '  - { method: POST, path: "/tuned/models/{model*}:generateContent", format: gemini, pipeline: relay, upstream_path: "/v1beta/models/{model*}:generateContent" }\n',
  ).replace('models: [gpt-4o-mini, "gpt-5*"]', 'models: [gpt-4o-mini, "gpt-5*", "ft:*"]');
  const tuned = await withGateway(t, config);
  const tunedSim = tuned.simulators.sim;
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] });
  const post = (model: string) => fetch(`${tuned.url}/tuned/models/${model}:generateContent`, {
    method: 'POST', headers: { 'x-goog-api-key': 'sk-alice-0001', 'content-type': 'application/json' }, body,
  });
  let res = await post('ft:gpt-4o-mini:org::abc123');
  t.equal(res.status, 200);
  await res.arrayBuffer();
  t.equal(tunedSim.requests.at(-1)?.path, '/v1beta/models/ft%3Agpt-4o-mini%3Aorg%3A%3Aabc123:generateContent', 'the whole id, encoded');
  res = await post('gpt-4o');
  t.equal(res.status, 200);
  await res.arrayBuffer();
  t.equal(tunedSim.requests.at(-1)?.path, '/v1beta/models/gpt-4o-mini:generateContent', 'an alias is rewritten in the path');
});
