// Claude Code's anthropic-beta flags through the Bedrock and Vertex kinds: the clouds refuse a request naming a flag they
// do not know (Bedrock 400 "invalid beta flag", Vertex 400 "Unexpected value(s)"), as their simulators now do, so each
// kind passes on only the flags its cloud accepts, advanced-tool-use renamed tool-search-tool; Vertex's count-tokens
// gets none; a platform's anthropic_betas replaces the list. Found by `npm run cli-kinds`: Claude Code's default model
// failed on Bedrock with 400 invalid beta flag.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withGateway } from '../helpers/gateway.ts';
import { clientFixture } from '../helpers/client-fixtures.ts';
import { cloudBetas, BEDROCK_BETAS, VERTEX_BETAS } from '../../adapters/kinds/anthropic-betas.ts';

const SECRET = 'betasSimulatedSecretAccessKey000000000001';
const EMAIL = 'betas@my-project.iam.gserviceaccount.com';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KEY_FILE = join(mkdtempSync(join(tmpdir(), 'gw-betas-')), 'sa.json');
writeFileSync(KEY_FILE, JSON.stringify({
  type: 'service_account', client_email: EMAIL, private_key_id: 'kid-betas', token_uri: '/token',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
}));

const aws = `credential_source: { type: aws, access_key_id: AKIASIMULATEDBETAS01, secret_access_key: "${SECRET}" }`;
const sa = `credential_source: { type: google-service-account, key: "${KEY_FILE}" }`;
const config = `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
platforms:
  bedrock: { kind: bedrock, region: us-east-1, simulator: true, simulator_aws_keys: { AKIASIMULATEDBETAS01: "${SECRET}" } }
  bedrock-own: { kind: bedrock, region: us-east-1, simulator: true, simulator_aws_keys: { AKIASIMULATEDBETAS01: "${SECRET}" }, anthropic_betas: [interleaved-thinking-2025-05-14, made-up-2099-01-01] }
  vertex: { kind: vertex, project: my-project, region: us-east5, simulator: true }
  vertex-own: { kind: vertex, project: my-project, region: us-east5, simulator: true, anthropic_betas: [interleaved-thinking-2025-05-14] }
groups:
  bedrock: { platform: bedrock, models: ["claude-*"], accounts: [{ id: aws-1, ${aws} }] }
  bedrock-own: { platform: bedrock-own, models: ["claude-*"], accounts: [{ id: aws-2, ${aws} }] }
  vertex: { platform: vertex, models: ["claude-*"], accounts: [{ id: sa-1, ${sa} }] }
  vertex-own: { platform: vertex-own, models: ["claude-*"], accounts: [{ id: sa-2, ${sa} }] }
keys:
  - { id: kb, key: sk-betas-bedrock-0001, group: bedrock }
  - { id: kbo, key: sk-betas-bedrock-own-0002, group: bedrock-own }
  - { id: kv, key: sk-betas-vertex-0003, group: vertex }
  - { id: kvo, key: sk-betas-vertex-own-0004, group: vertex-own }
`;

t.test('the tables: renamed, filtered, each once', async (t) => {
  t.same(cloudBetas(['advanced-tool-use-2025-11-20', 'tool-search-tool-2025-10-19', 'thinking-token-count-2026-05-13', 'claude-code-20250219'], BEDROCK_BETAS),
    ['tool-search-tool-2025-10-19', 'claude-code-20250219']);
  t.same(cloudBetas(['effort-2025-11-24', 'per-turn-control-2026-07-01'], VERTEX_BETAS), ['per-turn-control-2026-07-01'], 'Vertex refuses effort');
  t.same(cloudBetas(['effort-2025-11-24', 'per-turn-control-2026-07-01'], BEDROCK_BETAS), ['effort-2025-11-24'], 'Bedrock takes effort');
});

t.test('Claude Code\'s recorded requests through Bedrock and Vertex', async (t) => {
  const gw = await withGateway(t, config);
  for (const name of ['vertex', 'vertex-own']) gw.simulators[name].vertex!.trust(EMAIL, publicKey);
  const send = (key: string, client: 'claude-code' | 'claude-code-default', path = '/v1/messages?beta=true', change: (b: Record<string, unknown>) => Record<string, unknown> = (b) => b, moreBetas = '') => {
    const fx = clientFixture(client);
    const headers: Record<string, string> = { ...fx.headers, 'content-type': 'application/json', 'x-api-key': key, authorization: `Bearer ${key}` };
    if (moreBetas) headers['anthropic-beta'] += `,${moreBetas}`;
    return fetch(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(change(fx.body)) });
  };
  const last = (platform: string, pattern: RegExp) => gw.simulators[platform].requests.filter((r) => pattern.test(r.path)).at(-1)!;

  for (const client of ['claude-code', 'claude-code-default'] as const) {
    await t.test(`${client} on Bedrock: anthropic_beta in the body holds what Bedrock accepts`, async (t) => {
      const asked = clientFixture(client).headers['anthropic-beta'].split(',');
      t.ok(asked.some((b) => !BEDROCK_BETAS.includes(b)), 'the client asks flags Bedrock does not know');
      const res = await send('sk-betas-bedrock-0001', client);
      const text = await res.text();
      t.equal(res.status, 200, text.slice(0, 300));
      t.match(text, /event: message_stop/, 'the whole stream');
      const sent = last('bedrock', /^\/model\//);
      t.same((sent.json as any).anthropic_beta, cloudBetas(asked, BEDROCK_BETAS));
      t.ok((sent.json as any).anthropic_beta.includes('tool-search-tool-2025-10-19'), 'tool search under Bedrock\'s name');
      t.equal(sent.headers['anthropic-beta'], undefined, 'no header');
    });

    await t.test(`${client} on Vertex: the anthropic-beta header holds what Vertex accepts`, async (t) => {
      const asked = clientFixture(client).headers['anthropic-beta'].split(',');
      const res = await send('sk-betas-vertex-0003', client);
      const text = await res.text();
      t.equal(res.status, 200, text.slice(0, 300));
      const sent = last('vertex', /:streamRawPredict$/);
      t.equal(sent.headers['anthropic-beta'], cloudBetas(asked, VERTEX_BETAS).join(','));
      t.notMatch(String(sent.headers['anthropic-beta']), /advanced-tool-use|thinking-token-count|effort/);
    });
  }

  await t.test('Vertex\'s count-tokens gets no beta flag at all', async (t) => {
    const res = await send('sk-betas-vertex-0003', 'claude-code', '/v1/messages/count_tokens?beta=true', (b) => ({ model: b.model, messages: b.messages, system: b.system, tools: b.tools }));
    t.equal(res.status, 200, await res.text());
    t.equal(last('vertex', /count-tokens:rawPredict$/).headers['anthropic-beta'], undefined);
  });

  await t.test('a platform\'s anthropic_betas replaces the list; a flag the cloud does not know is refused as it refuses it', async (t) => {
    let res = await send('sk-betas-vertex-own-0004', 'claude-code');
    t.equal(res.status, 200, await res.text());
    t.equal(last('vertex-own', /:streamRawPredict$/).headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
    res = await send('sk-betas-bedrock-own-0002', 'claude-code', '/v1/messages?beta=true', (b) => ({ ...b, stream: false }), 'made-up-2099-01-01');
    const body = await res.json() as any;
    t.equal(res.status, 400, 'the operator named a flag Bedrock does not know');
    t.equal(body.error?.type, 'invalid_request_error');
    t.match(body.error?.message, /invalid beta flag/);
    t.same((last('bedrock-own', /^\/model\//).json as any).anthropic_beta, ['interleaved-thinking-2025-05-14', 'made-up-2099-01-01']);
  });
});
