// Kind vertex through the simulator playing Vertex AI, with the official SDKs: one platform serving Gemini models
// (publisher google) and Claude models (publisher anthropic, rawPredict), a Google service-account key (a file, and JSON
// in a variable) whose RS256 JWT the simulator verifies with the public key; a token refreshed once under concurrent
// requests, a token endpoint refusing the key cooling the account with reason `credential`, RESOURCE_EXHAUSTED as a 429.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { withGateway, writeConfig } from '../helpers/gateway.ts';
import { vertex } from '../../adapters/kinds/vertex.ts';
import { googleServiceAccount } from '../../adapters/credentials/google-service-account.ts';
import { loadConfig } from '../../core/config.ts';
import { credentialSources, defaults, formats, kinds, plugins, upstreamAuth } from '../../app/registry.ts';

const ADMIN = 'admin-secret-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'gw-vertex-'));
const KEY_FILE = join(dir, 'service-account.json');

/** A service account's key as Google issues it, made now; its private key PEM is what must never leak. */
function serviceAccount(email: string, tokenUri: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const json = {
    type: 'service_account', project_id: 'my-project', private_key_id: `kid-${email.split('@')[0]}`, private_key: pem,
    client_email: email, client_id: '1234567890', token_uri: tokenUri,
  };
  return { json, pem, publicKey };
}

const fromFile = serviceAccount('gateway@my-project.iam.gserviceaccount.com', 'set-after-start');
const fromEnv = serviceAccount('gateway-env@my-project.iam.gserviceaccount.com', '/token');
const untrusted = serviceAccount('stranger@other-project.iam.gserviceaccount.com', '/token');
const PEM_BODY = (pem: string) => pem.split('\n')[1];

const config = `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
platforms:
  vertex: { kind: vertex, project: my-project, region: us-east5, simulator: true, simulator_token_ttl_ms: 2000 }
groups:
  vertex:
    platform: vertex
    models: ["gemini-*", "claude-*"]
    model_map: { claude-sonnet-4: "claude-sonnet-4@20250514" }
    accounts:
      - { id: sa-file, credential_source: { type: google-service-account, key: "${KEY_FILE}" } }
  vertex-env:
    platform: vertex
    models: ["gemini-*", "claude-*"]
    accounts:
      - { id: sa-env, credential_source: { type: google-service-account, key: "\${VERTEX_SA_KEY}" } }
  broken:
    platform: vertex
    models: ["gemini-*"]
    accounts:
      - { id: sa-untrusted, credential_source: { type: google-service-account, key: "\${UNTRUSTED_SA_KEY}" } }
  limited:
    platform: vertex
    models: ["gemini-*", "claude-*"]
    accounts:
      - { id: sa-limited, credential_source: { type: google-service-account, key: "\${VERTEX_SA_KEY}" } }
keys:
  - { id: k1, key: sk-vertex-0001, group: vertex }
  - { id: k2, key: sk-vertex-env-0002, group: vertex-env }
  - { id: k3, key: sk-broken-0003, group: broken }
  - { id: k4, key: sk-limited-0004, group: limited }
`;

const BASE = '/v1/projects/my-project/locations/us-east5/publishers';

t.test('the kind maps paths, bodies and hosts', async (t) => {
  const options = { project: 'my-project', region: 'us-east5' };
  t.equal(vertex.baseUrl!(options), 'https://us-east5-aiplatform.googleapis.com');
  t.equal(vertex.baseUrl!({ project: 'p', region: 'global' }), 'https://aiplatform.googleapis.com', 'the global location\'s host');
  t.equal(vertex.formatFor!('claude-opus-4-1@20250805', options), 'anthropic-messages');
  t.equal(vertex.formatFor!('gemini-2.5-pro', options), 'gemini');
  t.equal(vertex.path!({ format: 'gemini', path: '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', options }),
    `${BASE}/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`);
  t.equal(vertex.path!({ format: 'anthropic-messages', path: '/v1/messages', model: 'claude-opus-4-1@20250805', stream: true, options: { project: 'p', region: 'global' } }),
    '/v1/projects/p/locations/global/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict');
  const body = vertex.body!({ model: 'claude-x', max_tokens: 5, messages: [] }, { format: 'anthropic-messages', path: '/v1/messages', model: 'claude-x', options }, {});
  t.same(body, { max_tokens: 5, messages: [], anthropic_version: 'vertex-2023-10-16' }, 'no model, Vertex\'s anthropic_version');
  const count = vertex.body!({ model: 'claude-x', messages: [] }, { format: 'anthropic-messages', path: '/v1/messages/count_tokens', model: 'claude-x@1', options }, {});
  t.equal(count.model, 'claude-x@1', 'the count names its model in the body');
});

t.test('a platform of kind vertex takes its host from the region', async (t) => {
  const file = writeConfig(`
store: { path: ":memory:" }
platforms:
  east: { kind: vertex, project: my-project, region: us-east5 }
  global: { kind: vertex, project: my-project, region: global }
  mine: { kind: vertex, project: my-project, region: us-east5, base_url: "https://vertex-proxy.example.com/" }
groups:
  g: { platform: east, models: ["*"], accounts: [{ id: a, credential_source: { type: google-service-account, key: "\${NO_SUCH_KEY:-}" } }] }
keys: []
`);
  const { config } = loadConfig(file, { plugins, formats, upstreamAuth, kinds, credentialSources, defaults, env: { GATEWAY_STORE_PATH: ':memory:' } });
  t.equal(config.platforms.east.base_url, 'https://us-east5-aiplatform.googleapis.com');
  t.equal(config.platforms.global.base_url, 'https://aiplatform.googleapis.com');
  t.equal(config.platforms.mine.base_url, 'https://vertex-proxy.example.com', 'base_url overrides');
  t.same(config.platforms.east.formats, ['gemini', 'anthropic-messages']);
  t.equal(config.groups.g.accounts[0].enabled, false, 'a key left empty by its variable leaves the account waiting');
});

t.test('a broken service-account key is reported without quoting it', async (t) => {
  const io = { fetch: (() => { throw new Error('no fetch expected'); }) as unknown as typeof fetch, signal: AbortSignal.timeout(5000), now: Date.now() };
  const secretish = 'MIIEsecret-material-0123456789';
  const cases: [string, RegExp][] = [
    [`{"private_key": "${secretish}", oops`, /not valid JSON/],
    [JSON.stringify({ type: 'service_account', client_email: 'a@b', token_uri: '/token', private_key: `-----BEGIN PRIVATE KEY-----\n${secretish}\n-----END PRIVATE KEY-----\n` }), /not a PEM private key/],
    [JSON.stringify({ type: 'service_account', client_email: 'a@b', private_key: secretish }), /has no token_uri/],
    [join(dir, 'missing.json'), /could not be read \(ENOENT\)/],
  ];
  for (const [key, said] of cases) {
    const err = await googleServiceAccount.obtain({ key }, io).then(() => new Error('obtained'), (e: Error) => e);
    t.match(err.message, said);
    t.notMatch(err.message, secretish, 'the key is not quoted');
  }
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const err = await googleServiceAccount.obtain({ key: JSON.stringify({ client_email: 'a@b', token_uri: '/token', private_key: ec }) }, io).then(() => new Error('obtained'), (e: Error) => e);
  t.match(err.message, /not an RSA key/);
});

t.test('vertex', async (t) => {
  const gw = await withGateway(t, config, {
    VERTEX_SA_KEY: JSON.stringify(fromEnv.json),
    UNTRUSTED_SA_KEY: JSON.stringify(untrusted.json),
  });
  const sim = gw.simulators.vertex;
  // The key file is written once the simulator's address is known: its token_uri is the simulator's token endpoint.
  writeFileSync(KEY_FILE, JSON.stringify({ ...fromFile.json, token_uri: `${sim.url}/token` }));
  sim.vertex!.trust(fromFile.json.client_email, fromFile.publicKey);
  sim.vertex!.trust(fromEnv.json.client_email, fromEnv.publicKey);
  const sent = () => sim.requests.filter((r) => r.path !== '/token');
  const tokenRequests = () => sim.requests.filter((r) => r.path === '/token');
  const openai = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  const google = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });

  await t.test('@google/genai: a Gemini model at the google publisher, whole, streamed and counted', async (t) => {
    sim.clear();
    const g = await google('sk-vertex-0001').models.generateContent({ model: 'gemini-2.5-flash', contents: 'hello' });
    t.ok(g.text && g.text.length > 0, 'an answer');
    t.ok((g.usageMetadata?.totalTokenCount ?? 0) > 0, 'usage');
    const first = sent()[0];
    t.equal(first.path, `${BASE}/google/models/gemini-2.5-flash:generateContent`);
    t.match(first.headers.authorization, /^Bearer ya29\.sim_/, 'the service-account token as a bearer');
    t.equal(first.headers['x-goog-api-key'], undefined, 'no client key upstream');
    let text = '';
    for await (const chunk of await google('sk-vertex-0001').models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'stream please' })) text += chunk.text ?? '';
    t.ok(text.length > 0, 'streamed text');
    t.equal(sent()[1].path, `${BASE}/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
    const counted = await google('sk-vertex-0001').models.countTokens({ model: 'gemini-2.5-flash', contents: 'count me' });
    t.ok((counted.totalTokens ?? 0) > 0, 'counted');
    t.equal(sent()[2].path, `${BASE}/google/models/gemini-2.5-flash:countTokens`);

    // The assertion: RS256, the key's id, iss the service account, aud the token endpoint, the cloud-platform scope.
    const assertion = new URLSearchParams(tokenRequests()[0]?.body ?? '').get('assertion') ?? '';
    const [header, claims] = assertion.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    t.same(header, { alg: 'RS256', typ: 'JWT', kid: fromFile.json.private_key_id });
    t.equal(claims.iss, fromFile.json.client_email);
    t.equal(claims.aud, `${sim.url}/token`);
    t.equal(claims.scope, 'https://www.googleapis.com/auth/cloud-platform');
    t.ok(claims.exp - claims.iat <= 3600);
    t.equal(new URLSearchParams(tokenRequests()[0].body).get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  });

  await t.test('@anthropic-ai/sdk: a Claude model at rawPredict and streamRawPredict, without model, with anthropic_version', async (t) => {
    sim.clear();
    const msg = await anthropic('sk-vertex-0001').messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    t.equal(msg.type, 'message');
    t.ok(msg.content.some((b) => b.type === 'text'));
    t.ok(msg.usage.input_tokens > 0, 'usage');
    const first = sent()[0];
    t.equal(first.path, `${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, 'the model_map\'s Vertex id in the path');
    t.equal((first.json as any).model, undefined, 'no model in the body');
    t.equal((first.json as any).anthropic_version, 'vertex-2023-10-16');
    t.match(first.headers.authorization, /^Bearer ya29\.sim_/);
    t.equal(first.headers['x-api-key'], undefined, 'no client key upstream');

    const stream = anthropic('sk-vertex-0001').messages.stream({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'stream please' }] });
    let text = '';
    stream.on('text', (d) => { text += d; });
    const final = await stream.finalMessage();
    t.equal(final.role, 'assistant');
    t.ok(text.length > 0, 'streamed text');
    t.equal(sent()[1].path, `${BASE}/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`);
    t.equal((sent()[1].json as any).stream, true);

    const tool = await anthropic('sk-vertex-0001').messages.create({
      model: 'claude-sonnet-4', max_tokens: 128, messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [{ name: 'get_weather', description: 'the weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    t.equal(tool.stop_reason, 'tool_use', 'a tool call');
    const use = tool.content.find((b) => b.type === 'tool_use');
    t.equal(use?.type === 'tool_use' && use.name, 'get_weather');
    const back = await anthropic('sk-vertex-0001').messages.create({
      model: 'claude-sonnet-4', max_tokens: 128,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: tool.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.type === 'tool_use' ? use!.id : '', content: 'sunny, 21C' }] },
      ],
    });
    t.equal(back.stop_reason, 'end_turn', 'the tool result answered');

    const counted = await anthropic('sk-vertex-0001').messages.countTokens({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'count me' }] });
    t.ok(counted.input_tokens > 0, 'counted');
    const count = sent().at(-1)!;
    t.equal(count.path, `${BASE}/anthropic/models/count-tokens:rawPredict`);
    t.equal((count.json as any).model, 'claude-sonnet-4@20250514', 'the count names its model in the body');
  });

  await t.test('OpenAI chat, translated to each publisher by the model; the other native clients crossed over', async (t) => {
    sim.clear();
    const claude = await openai('sk-vertex-0001').chat.completions.create({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'hello' }] });
    t.ok(claude.choices[0].message.content, 'a chat answer from Claude');
    t.equal(sent()[0].path, `${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`);
    t.equal((sent()[0].json as any).model, undefined);
    const gemini = await openai('sk-vertex-0001').chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hello' }] });
    t.ok(gemini.choices[0].message.content, 'a chat answer from Gemini');
    t.equal(sent()[1].path, `${BASE}/google/models/gemini-2.5-flash:generateContent`);
    let text = '';
    for await (const chunk of await openai('sk-vertex-0001').chat.completions.create({ model: 'claude-sonnet-4', stream: true, messages: [{ role: 'user', content: 'stream please' }] })) {
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    t.ok(text.length > 0, 'streamed from Claude');
    t.equal(sent()[2].path, `${BASE}/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`);
    const tool = await openai('sk-vertex-0001').chat.completions.create({
      model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    t.equal(tool.choices[0].message.tool_calls?.[0]?.type, 'function', 'a tool call through Gemini');

    // An Anthropic client asking a Gemini model goes to the google publisher, a Gemini client asking Claude to anthropic.
    const a = await anthropic('sk-vertex-0001').messages.create({ model: 'gemini-2.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    t.ok(a.content.some((b) => b.type === 'text'));
    t.equal(sent()[4].path, `${BASE}/google/models/gemini-2.5-flash:generateContent`);
    const g = await google('sk-vertex-0001').models.generateContent({ model: 'claude-sonnet-4', contents: 'hello' });
    t.ok(g.text && g.text.length > 0);
    t.equal(sent()[5].path, `${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`);
    t.equal((sent()[5].json as any).anthropic_version, 'vertex-2023-10-16');
  });

  await t.test('a key in a variable, token_uri a path on the platform; the token refreshed once under concurrency', async (t) => {
    sim.clear();
    const before = sim.vertex!.issued;
    const ask = (i: number) => (i % 2
      ? openai('sk-vertex-env-0002').chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] })
      : openai('sk-vertex-env-0002').chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }));
    const first = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(i)));
    t.equal(first.length, 8);
    t.equal(sim.vertex!.issued - before, 1, 'one token for eight concurrent requests');
    const bearer = sent()[0].headers.authorization as string;
    // Past the token's lifetime (2 s): the next requests wait for one new token, none is refused.
    await new Promise((r) => setTimeout(r, 2100));
    const second = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(i)));
    t.equal(second.length, 8, 'all served after the expiry');
    t.equal(sim.vertex!.issued - before, 2, 'one refresh for eight concurrent requests');
    t.not(sent().at(-1)!.headers.authorization, bearer, 'a new token');

    // The simulator itself refuses the expired token, as Vertex does.
    const expired = await fetch(`${sim.url}${BASE}/google/models/gemini-2.5-flash:generateContent`, {
      method: 'POST', headers: { authorization: bearer, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    t.equal(expired.status, 401, 'an expired token is refused');
    t.equal((await expired.json()).error.status, 'UNAUTHENTICATED');
  });

  await t.test('the simulator checks Claude bodies as Vertex does', async (t) => {
    sim.clear();
    await openai('sk-vertex-0001').chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    const bearer = sent().at(-1)!.headers.authorization as string;
    const post = (path: string, body: unknown) => fetch(`${sim.url}${path}`, { method: 'POST', headers: { authorization: bearer, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const messages = [{ role: 'user', content: 'hi' }];
    const withModel = await post(`${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, { model: 'claude-sonnet-4', anthropic_version: 'vertex-2023-10-16', max_tokens: 5, messages });
    t.equal(withModel.status, 400, 'a model field is refused');
    t.match((await withModel.json()).error.message, /model/);
    const noVersion = await post(`${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, { max_tokens: 5, messages });
    t.equal(noVersion.status, 400, 'anthropic_version is required');
    const ok = await post(`${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, { anthropic_version: 'vertex-2023-10-16', max_tokens: 5, messages });
    t.equal(ok.status, 200);
    t.equal((await ok.json()).model, 'claude-sonnet-4@20250514', 'the model from the path');
    const noBearer = await fetch(`${sim.url}${BASE}/anthropic/models/claude-sonnet-4@20250514:rawPredict`, { method: 'POST', body: '{}' });
    t.equal(noBearer.status, 401);
  });

  await t.test('a token endpoint refusing the key cools the account with reason credential, no key material anywhere', async (t) => {
    const err = await openai('sk-broken-0003').chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    t.equal(err.status, 503);
    const answer = JSON.stringify(err.error ?? {});
    t.notMatch(answer, PEM_BODY(untrusted.pem), 'no private key in the answer');
    const refused = sim.requests.filter((r) => r.path === '/token').at(-1)!;
    t.ok(refused, 'the token endpoint was asked');
    const res = await fetch(`${gw.url}/admin/accounts`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const text = await res.text();
    for (const key of [fromFile, fromEnv, untrusted]) t.notMatch(text, PEM_BODY(key.pem), 'no private key in /admin/accounts');
    const find = (v: any): any => (v && typeof v === 'object' ? (v.id === 'sa-untrusted' ? v : Object.values(v).map(find).find(Boolean)) : undefined);
    const bad = find(JSON.parse(text));
    t.equal(bad?.cooldown_reason, 'credential', 'cooling with reason credential');
    t.equal(bad?.status ?? bad?.state, 'cooling');
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
    t.match(metrics, /gateway_credential_refreshes_total\{provider="google-service-account",outcome="failed"\} [1-9]/, 'the failed refresh counted');
    for (const key of [fromFile, fromEnv, untrusted]) t.notMatch(metrics, PEM_BODY(key.pem), 'no private key in metrics');
    for (const r of sim.requests) t.notOk(`${JSON.stringify(r.headers)}${r.body}`.includes(PEM_BODY(fromEnv.pem)), 'no private key sent upstream');
  });

  await t.test('RESOURCE_EXHAUSTED (429) cools the account like a first-party rate limit', async (t) => {
    sim.clear();
    const err = await openai('sk-limited-0004').chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-simulator-fault': 'status=429' } }).catch((e) => e);
    t.equal(err.status, 429, 'every account rate limited');
    const upstream = sent().at(-1)!;
    t.equal(upstream.path, `${BASE}/google/models/gemini-2.5-flash:generateContent`);
    const res = await fetch(`${gw.url}/admin/accounts`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const find = (v: any): any => (v && typeof v === 'object' ? (v.id === 'sa-limited' ? v : Object.values(v).map(find).find(Boolean)) : undefined);
    const limited = find(await res.json());
    t.equal(limited?.status ?? limited?.state, 'cooling');
    t.match(limited?.cooldown_reason, /rate/, 'cooling for a rate limit');
  });
});
