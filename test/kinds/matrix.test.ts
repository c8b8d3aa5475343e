// Every client format through every upstream kind, with the official SDKs, whole and streamed: OpenAI chat and
// Responses, Anthropic Messages and Gemini against an azure-openai, an openai-compatible, a vertex (its Gemini and its
// Claude publisher) and a bedrock group, each on the simulator playing that cloud (which checks the kind's paths,
// credentials and signatures). Each cell asserts the simulator's echo of its own prompt reached the client and that the
// request was metered with tokens; the table of cells is printed as a comment.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { withGateway } from '../helpers/gateway.ts';
import { startSimulator } from '../../simulator/server.ts';

const ADMIN = 'admin-secret-token-0123456789abcdef';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const serviceAccount = {
  type: 'service_account', project_id: 'p', private_key_id: 'kid-1', client_email: 'gw@p.iam.gserviceaccount.com',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), token_uri: '/token',
};

const compat = await startSimulator({ host: '127.0.0.1', port: 0 });
t.teardown(() => compat.close());

const gw = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
platforms:
  azure: { kind: azure-openai, simulator: true }
  compat: { kind: openai-compatible, base_url: "${compat.url}", auth: bearer, format: [openai-chat] }
  vertex: { kind: vertex, project: p, region: us-east5, simulator: true }
  bedrock: { kind: bedrock, region: us-east-1, simulator: true, simulator_aws_keys: { AKIASIMULATED000001: "${SECRET}" } }
groups:
  azure: { platform: azure, models: ["*"], accounts: [{ id: azure-1, credential: azure-key }] }
  compat: { platform: compat, models: ["*"], accounts: [{ id: compat-1, credential: compat-token }] }
  vertex-gemini: { platform: vertex, models: ["*"], accounts: [{ id: sa-1, credential_source: { type: google-service-account, key: "\${SA_KEY}" } }] }
  vertex-claude: { platform: vertex, models: ["*"], accounts: [{ id: sa-2, credential_source: { type: google-service-account, key: "\${SA_KEY}" } }] }
  bedrock:
    platform: bedrock
    models: ["*"]
    model_map: { claude-sonnet-4-5: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" }
    accounts: [{ id: aws-1, credential_source: { type: aws, access_key_id: AKIASIMULATED000001, secret_access_key: "${SECRET}" } }]
keys:
  - { id: azure, key: sk-m-azure, group: azure }
  - { id: compat, key: sk-m-compat, group: compat }
  - { id: vertex-gemini, key: sk-m-vertex-gemini, group: vertex-gemini }
  - { id: vertex-claude, key: sk-m-vertex-claude, group: vertex-claude }
  - { id: bedrock, key: sk-m-bedrock, group: bedrock }
`, { SA_KEY: JSON.stringify(serviceAccount) });
gw.simulators.vertex.vertex!.trust(serviceAccount.client_email, publicKey.export({ type: 'spki', format: 'pem' }).toString());

/** Each group (its key is sk-m-GROUP), the model its clients ask for, its upstream and the path the kind must send to. */
const GROUPS: [string, string, { requests: { path: string }[] }, RegExp][] = [
  ['azure', 'gpt-4o-mini', gw.simulators.azure, /^\/openai\/v1\/(chat\/completions|responses)$/],
  ['compat', 'gpt-4o-mini', compat, /^\/v1\/chat\/completions$/],
  ['vertex-gemini', 'gemini-2.5-flash', gw.simulators.vertex, /^\/v1\/projects\/p\/locations\/us-east5\/publishers\/google\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent\?alt=sse)$/],
  ['vertex-claude', 'claude-sonnet-4-5', gw.simulators.vertex, /^\/v1\/projects\/p\/locations\/us-east5\/publishers\/anthropic\/models\/claude-sonnet-4-5:(rawPredict|streamRawPredict)$/],
  ['bedrock', 'claude-sonnet-4-5', gw.simulators.bedrock, /^\/model\/us\.anthropic\.claude-sonnet-4-5-20250929-v1%3A0\/(invoke|invoke-with-response-stream)$/],
];

type Client = (key: string, model: string, prompt: string, stream: boolean) => Promise<string>;
const CLIENTS: Record<string, Client> = {
  'openai-chat': async (key, model, prompt, stream) => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: prompt }];
    if (!stream) return (await openai.chat.completions.create({ model, messages })).choices[0].message.content ?? '';
    let text = '';
    for await (const c of await openai.chat.completions.create({ model, messages, stream: true })) text += c.choices[0]?.delta?.content ?? '';
    return text;
  },
  'openai-responses': async (key, model, prompt, stream) => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    if (!stream) return (await openai.responses.create({ model, input: prompt })).output_text;
    let text = '';
    for await (const e of await openai.responses.create({ model, input: prompt, stream: true })) if (e.type === 'response.output_text.delta') text += e.delta;
    return text;
  },
  'anthropic-messages': async (key, model, prompt, stream) => {
    const anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
    const body = { model, max_tokens: 256, messages: [{ role: 'user' as const, content: prompt }] };
    if (!stream) return (await anthropic.messages.create(body)).content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return (await anthropic.messages.stream(body).finalMessage()).content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  },
  gemini: async (key, model, prompt, stream) => {
    const google = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.url } });
    if (!stream) return (await google.models.generateContent({ model, contents: prompt })).text ?? '';
    let text = '';
    for await (const c of await google.models.generateContentStream({ model, contents: prompt })) text += c.text ?? '';
    return text;
  },
};

/** The usage record of the request that carried `prompt` (the echo names it), from the admin API. */
async function tokensOf(key: string): Promise<number> {
  const res = await fetch(`${gw.url}/admin/usage?key=${key}&limit=1`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const r = ((await res.json()) as { records: { input_tokens: number; output_tokens: number }[] }).records[0];
  return r ? r.input_tokens + r.output_tokens : 0;
}

const table: string[] = [];
for (const [group, model, upstream, path] of GROUPS) {
  const cells: string[] = [];
  for (const [client, ask] of Object.entries(CLIENTS)) {
    for (const stream of [false, true]) {
      await t.test(`${client}${stream ? ' (stream)' : ''} → ${group} (${model})`, async (t) => {
        const prompt = `matrix ${client} ${group} ${stream ? 'stream' : 'whole'}`;
        const before = upstream.requests.length;
        const text = await ask(`sk-m-${group}`, model, prompt, stream).catch((err: Error) => `failed: ${err.message}`);
        t.match(text, prompt, 'the echo of its prompt arrived');
        const sent = upstream.requests.slice(before).filter((r) => r.path !== '/token');
        t.equal(sent.length, 1, 'one upstream request');
        t.match(sent[0]?.path, path, "at the kind's path");
        t.ok(await tokensOf(group) > 0, 'metered with tokens');
        cells.push(text.includes(prompt) ? 'ok' : 'FAIL');
      });
    }
  }
  table.push(`| ${group} | ${cells.join(' | ')} |`);
}
t.comment(['| group | chat | chat stream | responses | responses stream | messages | messages stream | gemini | gemini stream |', '|---|---|---|---|---|---|---|---|---|', ...table].join('\n'));
