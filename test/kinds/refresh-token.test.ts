// The oauth2-refresh-token credential source through the simulator playing Azure, whose token endpoint rotates refresh
// tokens as Entra ID does (each answer carries a new one; one already used is refused): the gateway exchanges the
// configured refresh token once, and when the access token expires it refreshes with the rotated one, once however many
// requests wait, the refresh tokens never reaching the API, a log line or the admin API.
import t from 'tap';
import OpenAI from 'openai';
import { withGateway } from '../helpers/gateway.ts';

const ADMIN = 'admin-secret-token-0123456789abcdef';
const REFRESH = 'configured-refresh-token-0123456789';
const gw = await withGateway(t, `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
platforms:
  azure: { kind: azure-openai, simulator: true, simulator_token_ttl_ms: 1500 }
groups:
  azure:
    platform: azure
    models: ["gpt-4o*"]
    accounts:
      - id: refreshing-1
        credential_source: { type: oauth2-refresh-token, token_url: /tenant-1/oauth2/v2.0/token, refresh_token: "\${REFRESH_TOKEN}", client_id: app-1 }
keys:
  - { id: k, key: sk-refresh-0001, group: azure }
`, { REFRESH_TOKEN: REFRESH });
const sim = gw.simulators.azure;
const openai = new OpenAI({ apiKey: 'sk-refresh-0001', baseURL: `${gw.url}/v1`, maxRetries: 0 });
const ask = async (n: number) => (await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `refresh ${n}` }] })).choices[0].message.content;
const tokenCalls = () => sim.requests.filter((r) => /\/oauth2\/v2\.0\/token$/.test(r.path)).map((r) => new URLSearchParams(r.body));

t.test('the configured refresh token once, then the rotated one, one exchange for concurrent requests', async (t) => {
  const first = await Promise.all([1, 2, 3, 4, 5, 6].map(ask));
  t.strictSame(first, [1, 2, 3, 4, 5, 6].map((n) => `Echo: refresh ${n}`));
  t.equal(tokenCalls().length, 1, 'one exchange for six concurrent requests');
  t.equal(tokenCalls()[0].get('grant_type'), 'refresh_token');
  t.equal(tokenCalls()[0].get('refresh_token'), REFRESH);
  await new Promise((resolve) => setTimeout(resolve, 1600)); // past the access token's lifetime
  const second = await Promise.all([7, 8, 9, 10].map(ask));
  t.strictSame(second, [7, 8, 9, 10].map((n) => `Echo: refresh ${n}`));
  const calls = tokenCalls();
  t.equal(calls.length, 2, 'one refresh once the token expired');
  t.match(calls[1].get('refresh_token'), /^simrt_[0-9a-f]{32}$/, 'the rotated refresh token, not the used one (which the endpoint refuses)');
  const api = sim.requests.filter((r) => r.path.startsWith('/openai/'));
  t.ok(api.every((r) => /^Bearer simtok_/.test(String(r.headers.authorization))), 'the API sees access tokens only');
  t.notOk(api.some((r) => JSON.stringify(r).includes(REFRESH) || JSON.stringify(r).includes('simrt_')), 'never a refresh token');
  const accounts = await (await fetch(`${gw.url}/admin/accounts`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
  t.notOk(accounts.includes(REFRESH) || accounts.includes('simrt_'), 'nor in /admin/accounts');
});
