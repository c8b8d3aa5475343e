// A body naming a field twice (`{"model":"a","model":"b"}`): JSON.parse keeps the last, so the gateway would check, limit
// and bill by one copy while a natively relayed body reaches the upstream with both, and the upstream may read the
// other. Such a body is refused with a 400 in the client's own format, in every format, on the file store and on Redis:
// nothing reaches the upstream, nothing is admitted or billed. The same bodies without the second copy are served.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, rawRequest } from '../helpers/http.ts';
import { redisForTest } from '../store/redis-server.ts';

const ADMIN = 'duplicate-admin-token-0123456789abcdef';
const KEY = 'sk-dup-0001';

const config = (store: string) => `
server: { host: 127.0.0.1, port: 0 }
store: { ${store} }
admin: { token: ${ADMIN} }
platforms:
  sim: { simulator: true }
groups:
  main: { platform: sim, models: ["gpt-*", "claude-*", "gemini-*"], accounts: [ { id: sim-1, credential: upstream-credential-1 } ] }
keys:
  - { id: dup, key: ${KEY}, group: main, limits: { rpm: 1000, tpm: 1000000, quota_usd: 100 } }
pricing:
  "gpt-*": { input: 1, output: 1 }
  "claude-*": { input: 1, output: 1 }
  "gemini-*": { input: 1, output: 1 }
pipelines:
  relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /v1/responses, format: openai-responses, pipeline: relay }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: relay }
  - { method: GET, path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
`;

type Envelope = (body: any, field: string) => boolean;
const json = (text: string): unknown => { try { return JSON.parse(text); } catch { return undefined; } };
const openai: Envelope = (b, field) => b?.error?.code === 'invalid_body' && b.error.param === field && b.error.message.includes(`"${field}" more than once`);
const anthropic: Envelope = (b, field) => b?.type === 'error' && b.error?.type === 'invalid_request_error' && b.error.message.includes(`"${field}" more than once`);
const gemini: Envelope = (b, field) => b?.error?.code === 400 && b.error.status === 'INVALID_ARGUMENT' && b.error.message.includes(`"${field}" more than once`);

const ANTHROPIC = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
// Each: route, headers, the body with a field twice (as a client may write it), the field, the same body with it once.
const CASES: [string, Record<string, string>, string, string, string, Envelope][] = [
  ['/v1/chat/completions', bearer(KEY), '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"model":"gpt-5"}', 'model',
    '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}', openai],
  ['/v1/chat/completions', bearer(KEY), '{"mod\\u0065l":"gpt-4o-mini","model":"gpt-5","messages":[{"role":"user","content":"hi"}]}', 'model',
    '{"mod\\u0065l":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}', openai],
  ['/v1/responses', bearer(KEY), '{"model":"gpt-5","input":"hi","stream":false,"stream":true}', 'stream', '{"model":"gpt-5","input":"hi","stream":false}', openai],
  ['/v1/messages', ANTHROPIC, '{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"max_tokens":100000}', 'max_tokens',
    '{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}', anthropic],
  ['/v1beta/models/gemini-2.5-flash:generateContent', { 'x-goog-api-key': KEY },
    '{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":5,"maxOutputTokens":100000}}', 'generationConfig.maxOutputTokens',
    '{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":5}}', gemini],
];

async function refusesTwice(t: Test, store: string): Promise<void> {
  const gateway = await withGateway(t, config(store));
  const upstream = () => Object.values(gateway.simulators).flatMap((s) => s.requests);
  const records = async () => (await (await fetch(`${gateway.url}/admin/usage?key=dup&limit=100`, { headers: bearer(ADMIN) })).json() as { records: unknown[] }).records;

  for (const [path, headers, twice, field, , envelope] of CASES) {
    // node:http sends the body as written, both copies.
    const res = await rawRequest(gateway.url, { method: 'POST', path, headers: { ...headers, 'content-type': 'application/json' }, body: twice });
    t.equal(res.status, 400, `${path}, "${field}" twice: 400`);
    t.ok(envelope(json(res.body), field), `in the client's format, naming the field: ${res.body.slice(0, 300)}`);
  }
  t.equal(upstream().length, 0, 'nothing reached the upstream');

  for (const [path, headers, , field, once] of CASES) {
    const res = await rawRequest(gateway.url, { method: 'POST', path, headers: { ...headers, 'content-type': 'application/json' }, body: once });
    t.equal(res.status, 200, `${path}, "${field}" once: served`);
  }
  t.equal(upstream().length, CASES.length, 'each served body reached the upstream');
  const billed = await eventually(records, (r) => r.length >= CASES.length);
  t.equal(billed.length, CASES.length, 'only the served requests were admitted and billed');
}

t.test('file store', async (t) => {
  await refusesTwice(t, `path: "${join(mkdtempSync(join(tmpdir(), 'gw-dup-')), 'gateway.db')}"`);
});

t.test('Redis', async (t) => {
  const { url, prefix } = await redisForTest(t, 'duplicate-fields');
  await refusesTwice(t, `redis: "${url}", prefix: "${prefix}"`);
});
