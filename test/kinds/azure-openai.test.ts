// Kind azure-openai through the simulator playing Azure, with the official SDKs: the v1 and the deployments API, api-key
// and Entra ID tokens (refreshed once under concurrent requests, a failing token endpoint cooling the account with reason
// `credential`), Azure's 429 and content filter, and Anthropic and Gemini clients translated.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { withGateway } from '../helpers/gateway.ts';
import { AZURE_FILTER_COMPLETION, AZURE_FILTER_PROMPT } from '../../simulator/azure.ts';
import { BAD_CREDENTIAL } from '../../simulator/incoming.ts';

const ADMIN = 'admin-secret-token-0123456789abcdef';
const config = `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
platforms:
  azure: { kind: azure-openai, simulator: true, simulator_token_ttl_ms: 2000 }
  azure-classic: { kind: azure-openai, api: deployments, api_version: "2024-10-21", simulator: true }
groups:
  by-key:
    platform: azure
    models: ["gpt-4o*"]
    model_map: { gpt-4o: gpt-4o-mini }
    accounts: [{ id: key-1, credential: azure-api-key-1 }]
  by-token:
    platform: azure
    models: ["gpt-4o*"]
    accounts:
      - id: entra-1
        credential_source: { type: oauth2-client-credentials, token_url: /tenant-1/oauth2/v2.0/token, client_id: app-1, client_secret: entra-secret-1, scope: https://cognitiveservices.azure.com/.default }
  classic:
    platform: azure-classic
    models: ["gpt-4o*"]
    accounts: [{ id: classic-1, credential: azure-api-key-2 }]
  broken:
    platform: azure
    models: ["gpt-4o*"]
    accounts:
      - id: entra-bad
        credential_source: { type: oauth2-client-credentials, token_url: /tenant-1/oauth2/v2.0/token, client_id: app-1, client_secret: ${BAD_CREDENTIAL} }
keys:
  - { id: k1, key: sk-by-key-0001, group: by-key }
  - { id: k2, key: sk-by-token-0002, group: by-token }
  - { id: k3, key: sk-classic-0003, group: classic }
  - { id: k4, key: sk-broken-0004, group: broken }
`;

t.test('azure-openai', async (t) => {
  const gw = await withGateway(t, config);
  const sim = gw.simulators.azure;
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const sent = () => sim.requests.filter((r) => !r.path.includes('/oauth2/'));

  await t.test('v1 API with api-key: chat, stream, a tool call, Responses', async (t) => {
    sim.clear();
    const chat = await openai('sk-by-key-0001').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }] });
    t.equal(chat.object, 'chat.completion');
    t.ok(chat.choices[0].message.content);
    const first = sent()[0];
    t.equal(first.path, '/openai/v1/chat/completions', 'the v1 path');
    t.equal(first.headers['api-key'], 'azure-api-key-1', 'the api-key header');
    t.equal(first.headers.authorization, undefined, 'no client credential upstream');
    t.equal((first.json as { model: string }).model, 'gpt-4o-mini', 'the deployment name from model_map');

    let text = '';
    for await (const chunk of await openai('sk-by-key-0001').chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream please' }] })) {
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    t.ok(text.length > 0, 'streamed text');

    const tool = await openai('sk-by-key-0001').chat.completions.create({
      model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }], tool_choice: 'required',
    });
    t.equal(tool.choices[0].message.tool_calls?.[0]?.type, 'function', 'a tool call');

    const resp = await openai('sk-by-key-0001').responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    t.equal(resp.object, 'response');
    t.ok(resp.output_text.length > 0);
    t.ok(sent().some((r) => r.path === '/openai/v1/responses'), 'Responses at /openai/v1/responses');
    let events = 0;
    for await (const e of await openai('sk-by-key-0001').responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true })) if (e.type === 'response.output_text.delta') events++;
    t.ok(events > 0, 'a streamed Responses answer');
  });

  await t.test('deployments API: the deployment in the path, api-version in the query', async (t) => {
    sim.clear();
    const chat = await openai('sk-classic-0003').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    t.ok(chat.choices[0].message.content);
    t.equal(gw.simulators['azure-classic'].requests[0].path, '/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21');
  });

  await t.test('Anthropic and Gemini clients are translated to Azure chat', async (t) => {
    const anthropic = new Anthropic({ apiKey: 'sk-by-key-0001', baseURL: gw.url, maxRetries: 0 });
    const msg = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    t.equal(msg.type, 'message');
    t.ok(msg.content.some((b) => b.type === 'text'));
    const stream = anthropic.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    const final = await stream.finalMessage();
    t.equal(final.role, 'assistant');
    const google = new GoogleGenAI({ apiKey: 'sk-by-key-0001', httpOptions: { baseUrl: gw.url } });
    const g = await google.models.generateContent({ model: 'gpt-4o-mini', contents: 'hello' });
    t.ok(g.text && g.text.length > 0, 'a Gemini answer');
  });

  await t.test('Azure content filter reaches each client in its own format', async (t) => {
    const refused = await openai('sk-by-key-0001').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `x ${AZURE_FILTER_PROMPT}` }] }).catch((e) => e);
    t.equal(refused.status, 400);
    t.equal(refused.code, 'content_filter', 'the code passes through');
    const cut = await openai('sk-by-key-0001').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `x ${AZURE_FILTER_COMPLETION}` }] });
    t.equal(cut.choices[0].finish_reason, 'content_filter');
    const anthropic = new Anthropic({ apiKey: 'sk-by-key-0001', baseURL: gw.url, maxRetries: 0 });
    const a = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: `x ${AZURE_FILTER_PROMPT}` }] }).catch((e) => e);
    t.equal(a.status, 400, 'the Anthropic client gets a 400');
    t.equal(a.error?.type, 'error', 'in Anthropic\'s envelope');
    const b = await anthropic.messages.create({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: `x ${AZURE_FILTER_COMPLETION}` }] });
    t.equal(b.stop_reason, 'refusal', 'a filtered answer ends as a refusal');
  });

  await t.test('Entra ID token: fetched once under concurrent requests, refreshed once it nears expiry', async (t) => {
    sim.clear();
    const before = sim.azure!.issued;
    const ask = () => openai('sk-by-token-0002').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const first = await Promise.all(Array.from({ length: 8 }, ask));
    t.equal(first.length, 8);
    t.equal(sim.azure!.issued - before, 1, 'one token for eight concurrent requests');
    const bearer = sent()[0].headers.authorization;
    t.match(bearer, /^Bearer simtok_/, 'the token as a bearer');
    t.equal(sent()[0].headers['api-key'], undefined);
    t.notOk(sim.requests.some((r) => JSON.stringify(r.headers).includes('entra-secret-1')), 'the client secret never reaches the API');
    // Past the token's lifetime (2 s): the next requests wait for one new token, no request is refused.
    await new Promise((r) => setTimeout(r, 2100));
    const second = await Promise.all(Array.from({ length: 8 }, ask));
    t.equal(second.length, 8, 'all served after the expiry');
    t.equal(sim.azure!.issued - before, 2, 'one refresh for eight concurrent requests');
    t.not(sent().at(-1)!.headers.authorization, bearer, 'a new token');
  });

  await t.test('a failing token endpoint cools the account with reason credential', async (t) => {
    const err = await openai('sk-broken-0004').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    t.equal(err.status, 503);
    t.notMatch(JSON.stringify(err.error ?? {}), BAD_CREDENTIAL, 'no secret in the answer');
    const res = await fetch(`${gw.url}/admin/accounts`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const text = await res.text();
    t.notMatch(text, BAD_CREDENTIAL, 'no secret in /admin/accounts');
    const find = (v: any): any => (v && typeof v === 'object' ? (v.id === 'entra-bad' ? v : Object.values(v).map(find).find(Boolean)) : undefined);
    const bad = find(JSON.parse(text));
    t.equal(bad?.cooldown_reason, 'credential', 'cooling with reason credential');
    t.equal(bad?.status ?? bad?.state, 'cooling');
  });

  await t.test('an Azure 429 cools the account from retry-after-ms and fails over like a first-party one', async (t) => {
    const err = await openai('sk-by-key-0001').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-simulator-fault': 'status=429' } }).catch((e) => e);
    t.equal(err.status, 429, 'every account rate limited');
    t.ok(Number(err.headers?.get?.('retry-after') ?? err.headers?.['retry-after']) >= 1);
  });
});

