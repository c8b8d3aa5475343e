// Kind bedrock through the simulator playing Bedrock (which verifies every SigV4 signature with the key's secret), with
// the official SDKs: Anthropic natively (whole, streamed from event-stream, a tool call), OpenAI chat and Responses and
// Gemini translated; a Bedrock API key; a wrong secret refused and its account paused; a ThrottlingException failing over
// and cooling the account; Bedrock's errors in each client's own envelope.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { createHash, createHmac } from 'node:crypto';
import { withGateway } from '../helpers/gateway.ts';
import { sigv4 } from '../../adapters/shared/sigv4.ts';

const ADMIN = 'admin-secret-token-0123456789abcdef';
const MODEL = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const config = `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
platforms:
  bedrock:
    kind: bedrock
    region: us-east-1
    simulator: true
    simulator_aws_keys:
      AKIASIMULATED000001: "${SECRET}"
      AKIASIMULATED000002: "sim-fault:status=429;times=1"
      AKIASIMULATED000003: "the-real-secret"
groups:
  claude:
    platform: bedrock
    models: [claude-sonnet-4, "${MODEL}"]
    model_map: { claude-sonnet-4: "${MODEL}" }
    accounts:
      - id: aws-1
        credential_source: { type: aws, access_key_id: AKIASIMULATED000001, secret_access_key: "${SECRET}", session_token: sim-session-token }
  by-api-key:
    platform: bedrock
    models: [claude-sonnet-4]
    model_map: { claude-sonnet-4: "${MODEL}" }
    accounts: [{ id: api-key-1, credential: ABSKsimulatedbedrockapikey }]
  wrong-secret:
    platform: bedrock
    models: [claude-sonnet-4]
    model_map: { claude-sonnet-4: "${MODEL}" }
    accounts:
      - id: aws-wrong
        credential_source: { type: aws, access_key_id: AKIASIMULATED000003, secret_access_key: not-the-secret }
  throttled:
    platform: bedrock
    models: [claude-sonnet-4]
    model_map: { claude-sonnet-4: "${MODEL}" }
    accounts:
      - id: aws-throttled
        priority: 0
        credential_source: { type: aws, access_key_id: AKIASIMULATED000002, secret_access_key: "sim-fault:status=429;times=1" }
      - id: aws-spare
        priority: 1
        credential_source: { type: aws, access_key_id: AKIASIMULATED000001, secret_access_key: "${SECRET}" }
keys:
  - { id: k1, key: sk-bedrock-0001, group: claude }
  - { id: k2, key: sk-bedrock-0002, group: by-api-key }
  - { id: k3, key: sk-bedrock-0003, group: wrong-secret }
  - { id: k4, key: sk-bedrock-0004, group: throttled }
`;

const hex = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * SigV4 written out from AWS's specification, independent of smithy: the canonical URI encodes each segment of the
 * path as sent once more (a model id's %3A is %253A in it), headers trimmed, the body's own hash.
 */
function specSignature(method: string, pathAndQuery: string, headers: Record<string, any>, body: string, secret: string): string {
  const auth = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=/.exec(String(headers.authorization))!;
  const [, day, region, service, signed] = auth;
  const [path, query = ''] = pathAndQuery.split('?');
  const uri = path.split('/').map((seg) => encodeURIComponent(seg).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');
  const q = query ? query.split('&').map((p) => p.split('=').map((x) => encodeURIComponent(decodeURIComponent(x))).join('=')).sort().join('&') : '';
  const names = signed.split(';');
  const canonical = [method, uri, q, names.map((n) => `${n}:${String(headers[n]).trim().replace(/\s+/g, ' ')}\n`).join(''), signed, hex(body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', headers['x-amz-date'], scope, hex(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

const weather = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

async function accounts(url: string): Promise<any[]> {
  const res = await fetch(`${url}/admin/accounts`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const found: any[] = [];
  const walk = (v: any): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') { if (typeof v.id === 'string' && 'cooldown_reason' in v) found.push(v); Object.values(v).forEach(walk); }
  };
  walk(await res.json());
  return found;
}

t.test('bedrock', async (t) => {
  const gw = await withGateway(t, config);
  const sim = gw.simulators.bedrock;
  const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  const calls = () => sim.requests.filter((r) => r.path.startsWith('/model/'));

  await t.test('Anthropic SDK, whole: the invoke path, the signed request, the Bedrock body', async (t) => {
    sim.clear();
    const verified = sim.bedrock!.verified;
    const msg = await anthropic('sk-bedrock-0001').messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    t.equal(msg.type, 'message');
    t.equal(msg.model, 'claude-sonnet-4', 'the client\'s model name');
    t.ok(msg.content.some((b) => b.type === 'text' && b.text.length > 0), 'a text answer');
    t.ok(msg.usage.input_tokens > 0 && msg.usage.output_tokens > 0, 'usage');
    const [sent] = calls();
    t.equal(sent.path, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke', 'the inference-profile id, its colon encoded once');
    t.match(String(sent.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIASIMULATED000001\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);
    t.equal(sent.headers['x-amz-security-token'], 'sim-session-token', 'the session token');
    t.equal(sim.bedrock!.verified - verified, 1, 'the simulator verified the signature');
    const body = sent.json as Record<string, unknown>;
    t.equal(body.anthropic_version, 'bedrock-2023-05-31');
    t.notOk('model' in body, 'no model in the body');
    t.notOk('stream' in body, 'no stream in the body');
    t.notMatch(JSON.stringify(sent.headers), SECRET, 'the secret access key is never sent');
    t.equal(String(sent.headers.authorization).split('Signature=')[1], specSignature('POST', sent.path, sent.headers, sent.body, SECRET), 'the signature AWS\'s specification computes');
    t.notOk(sent.headers['x-api-key'], 'no Anthropic key header');
  });

  await t.test('Anthropic SDK, streamed: event-stream decoded into Anthropic events', async (t) => {
    sim.clear();
    const stream = anthropic('sk-bedrock-0001').messages.stream({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'tell me a story' }] });
    let text = '';
    stream.on('text', (d) => { text += d; });
    const final = await stream.finalMessage();
    t.ok(text.length > 0, 'text deltas');
    t.equal(final.stop_reason, 'end_turn');
    t.ok(final.usage.output_tokens > 0, 'output tokens');
    t.equal(calls()[0].path, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream');
    t.notOk('stream' in (calls()[0].json as object), 'no stream field');
    // The gateway metered the stream: its record has the tokens the events said.
    let record: any;
    for (let i = 0; i < 50 && !record; i++) {
      const res = await fetch(`${gw.url}/admin/usage?limit=50`, { headers: { authorization: `Bearer ${ADMIN}` } });
      record = ((await res.json()) as { records: any[] }).records.find((r) => r.stream && r.input_tokens === final.usage.input_tokens);
      if (!record) await new Promise((r) => setTimeout(r, 20));
    }
    t.equal(record?.output_tokens, final.usage.output_tokens, 'the record has the streamed output tokens');
  });

  await t.test('Anthropic SDK: a tool call, whole and streamed', async (t) => {
    const msg = await anthropic('sk-bedrock-0001').messages.create({
      model: 'claude-sonnet-4', max_tokens: 128, tools: [weather], tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'weather in Paris?' }],
    });
    const use = msg.content.find((b) => b.type === 'tool_use');
    t.equal(use?.type === 'tool_use' && use.name, 'get_weather', 'a tool_use block');
    t.equal(msg.stop_reason, 'tool_use');
    const final = await anthropic('sk-bedrock-0001').messages.stream({
      model: 'claude-sonnet-4', max_tokens: 128, tools: [weather], tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'weather in Paris?' }],
    }).finalMessage();
    t.ok(final.content.some((b) => b.type === 'tool_use' && typeof b.input === 'object'), 'a streamed tool_use with its input');
  });

  await t.test('OpenAI chat and Responses, translated', async (t) => {
    const openai = new OpenAI({ apiKey: 'sk-bedrock-0001', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'hello' }] });
    t.ok(chat.choices[0].message.content, 'a chat answer');
    t.ok(chat.usage!.prompt_tokens > 0);
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ model: 'claude-sonnet-4', stream: true, messages: [{ role: 'user', content: 'stream please' }] })) {
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    t.ok(text.length > 0, 'a streamed chat answer');
    const tool = await openai.chat.completions.create({
      model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'weather in Paris?' }], tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather.input_schema } }],
    });
    t.equal(tool.choices[0].message.tool_calls?.[0]?.type, 'function', 'a tool call');
    const resp = await openai.responses.create({ model: 'claude-sonnet-4', input: 'hi' });
    t.equal(resp.object, 'response');
    t.ok(resp.output_text.length > 0);
    let events = 0;
    for await (const e of await openai.responses.create({ model: 'claude-sonnet-4', input: 'hi', stream: true })) if (e.type === 'response.output_text.delta') events++;
    t.ok(events > 0, 'a streamed Responses answer');
    t.ok(calls().every((r) => !('model' in (r.json as object))), 'no translated body names the model');
  });

  await t.test('Gemini SDK, translated', async (t) => {
    const google = new GoogleGenAI({ apiKey: 'sk-bedrock-0001', httpOptions: { baseUrl: gw.url } });
    const g = await google.models.generateContent({ model: 'claude-sonnet-4', contents: 'hello' });
    t.ok(g.text && g.text.length > 0, 'a Gemini answer');
    let text = '';
    for await (const chunk of await google.models.generateContentStream({ model: 'claude-sonnet-4', contents: 'hello' })) text += chunk.text ?? '';
    t.ok(text.length > 0, 'a streamed Gemini answer');
  });

  await t.test('a Bedrock API key goes as a bearer, unsigned', async (t) => {
    sim.clear();
    const msg = await anthropic('sk-bedrock-0002').messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    t.equal(msg.type, 'message');
    t.equal(calls()[0].headers.authorization, 'Bearer ABSKsimulatedbedrockapikey');
    t.notOk(calls()[0].headers['x-amz-date'], 'no signature');
  });

  await t.test('a wrong secret: refused by Bedrock, the account paused (auth), the client gets the pool\'s error', async (t) => {
    sim.clear();
    const err = await anthropic('sk-bedrock-0003').messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }).catch((e) => e);
    t.equal(err.status, 503, 'no account could serve');
    t.equal(err.error?.type, 'error', 'in Anthropic\'s envelope');
    t.notMatch(JSON.stringify(err.error ?? {}), 'not-the-secret', 'no secret in the answer');
    t.ok(sim.requests.some((r) => r.path === '/async-invoke?maxResults=1'), 'the credential was checked alone');
    const bad = (await accounts(gw.url)).find((a) => a.id === 'aws-wrong');
    t.equal(bad?.cooldown_reason, 'auth', 'paused for its credential');
  });

  await t.test('a ThrottlingException fails over to the next account and cools the throttled one', async (t) => {
    sim.clear();
    const msg = await anthropic('sk-bedrock-0004').messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] });
    t.equal(msg.type, 'message', 'served by the spare account');
    t.equal(calls().length, 2, 'two attempts');
    const list = await accounts(gw.url);
    t.equal(list.find((a) => a.id === 'aws-throttled')?.cooldown_reason, 'rate_limited', 'the throttled account cools');
  });

  await t.test('Bedrock errors reach each client in its own envelope; a 429 as a rate limit', async (t) => {
    const fault = { headers: { 'x-simulator-fault': 'status=429' } };
    const a = await anthropic('sk-bedrock-0002').messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, fault).catch((e) => e);
    t.equal(a.status, 429);
    t.equal(a.error?.error?.type, 'rate_limit_error', 'Anthropic\'s rate-limit type');
    const openai = new OpenAI({ apiKey: 'sk-bedrock-0002', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const o = await openai.chat.completions.create({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }] }, fault).catch((e) => e);
    t.equal(o.status, 429, 'an OpenAI client gets a 429');
    t.ok(o.error?.message, 'with a message');
  });

  await t.test('Anthropic beta flags go in the body, as Bedrock takes them', async (t) => {
    sim.clear();
    const msg = await anthropic('sk-bedrock-0001').beta.messages.create({
      model: 'claude-sonnet-4', max_tokens: 64, betas: ['interleaved-thinking-2025-05-14'], messages: [{ role: 'user', content: 'hello' }],
    });
    t.equal(msg.type, 'message');
    const [sent] = calls();
    t.equal(sent.path, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke', 'the beta query is not Bedrock\'s');
    t.same((sent.json as any).anthropic_beta, ['interleaved-thinking-2025-05-14']);
    t.equal(sent.headers['anthropic-beta'], undefined, 'no beta header');
  });

  await t.test('the admin account test signs the body Bedrock takes', async (t) => {
    const res = await fetch(`${gw.url}/admin/accounts/aws-1/test`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{}' });
    const result = await res.json() as { ok: boolean; status: number; path: string; message: string | null };
    t.equal(result.status, 200, String(result.message));
    t.equal(result.ok, true);
  });

  await t.test('count_tokens goes to count-tokens and answers in Anthropic\'s shape', async (t) => {
    sim.clear();
    const count = await anthropic('sk-bedrock-0001').messages.countTokens({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'how many tokens is this?' }] });
    t.ok(count.input_tokens > 0, 'input_tokens');
    const [sent] = calls();
    t.equal(sent.path, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/count-tokens');
    const inner = JSON.parse((sent.json as any).input.invokeModel.body);
    t.equal(inner.anthropic_version, 'bedrock-2023-05-31', 'the invoke body inside');
    t.notOk('model' in inner);
  });

  await t.test('the simulator verifies signatures: a tampered body or a wrong secret is refused with 403', async (t) => {
    const url = new URL(`${sim.url}/model/${encodeURIComponent(MODEL)}/invoke`);
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    const send = async (secret: string, sent: string) => {
      const signed = await sigv4({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) }, { accessKeyId: 'AKIASIMULATED000001', secretAccessKey: secret }, 'us-east-1', 'bedrock');
      return fetch(url, { method: 'POST', body: sent, headers: { 'content-type': 'application/json', ...signed } });
    };
    t.equal((await send(SECRET, body)).status, 200, 'signed with the secret: served');
    const tampered = await send(SECRET, body.replace('hi', 'ho'));
    t.equal(tampered.status, 403, 'a body changed after signing');
    t.match(tampered.headers.get('x-amzn-errortype'), /^InvalidSignatureException/);
    const wrong = await send('another-secret', body);
    t.equal(wrong.status, 403, 'a wrong secret');
    t.match((await wrong.json() as { message: string }).message, /signature we calculated does not match/);
  });

  await t.test('an exception inside the event stream reaches the client as its stream\'s error', async (t) => {
    const stream = anthropic('sk-bedrock-0001').messages.stream({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'a long story please' }] },
      { headers: { 'x-simulator-fault': 'midstream-error' } });
    let text = '';
    stream.on('text', (d) => { text += d; });
    const err = await stream.finalMessage().catch((e) => e);
    t.ok(text.length > 0, 'content came first');
    t.ok(err instanceof Error, 'the stream failed');
    t.match(String(err.message), /Overloaded|overloaded/, 'with the exception\'s message');
    const openai = new OpenAI({ apiKey: 'sk-bedrock-0001', baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const chunks = await openai.chat.completions.create({ model: 'claude-sonnet-4', stream: true, messages: [{ role: 'user', content: 'a long story please' }] },
      { headers: { 'x-simulator-fault': 'midstream-error' } });
    const failed = await (async () => { for await (const _ of chunks) { /* read on */ } })().then(() => undefined, (e) => e);
    t.ok(failed instanceof Error, 'a translated stream fails too');
  });

  await t.test('the simulator refuses what Bedrock refuses', async (t) => {
    const url = `${sim.url}/model/${encodeURIComponent(MODEL)}/invoke`;
    const unsigned = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    t.equal(unsigned.status, 403);
    const withModel = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer ABSKkey', 'content-type': 'application/json' },
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', model: 'x', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
    t.equal(withModel.status, 400);
    t.match(withModel.headers.get('x-amzn-errortype'), /^ValidationException/);
    t.match((await withModel.json() as { message: string }).message, /extraneous key \[model\]/);
  });
});
