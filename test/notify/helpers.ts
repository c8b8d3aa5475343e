// Shared by the webhook tests: a config whose key `q` pays 0.14 USD a request (the simulator's 7 output tokens at 20 000
// USD per 1M; input free), a pool group whose accounts fail as asked, the admin API (the default routes), and one
// webhook to a receiver.
import { BAD_CREDENTIAL } from '../../simulator/server.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { ADMIN } from '../admin/helpers.ts';

export const SECRET = 'whsec-0123456789abcdef-test';
export const KEY = 'sk-quota-0001';
/** What one chat of `chat()` costs key q. */
export const COST = 0.14;

export interface HookOptions {
  url: string; events?: string[]; limits?: string; settings?: string[]; store?: string; server?: string;
  /** The pool group's accounts (flow maps). Default: one refused credential and one rate limited for 30 s. */
  accounts?: string[];
  /** More webhooks (flow maps). */
  hooks?: string[];
}

export const refused = `{ id: revoked, credential: ${BAD_CREDENTIAL}, priority: 1 }`;
export const limited = '{ id: limited, credential: "sim-fault:status=429;retry-after=30", priority: 2 }';

export const hookConfig = (o: HookOptions) => `
server: { host: 127.0.0.1, port: 0${o.server ? `, ${o.server}` : ''} }
store: { ${o.store ?? 'path: ":memory:"'} }
admin: { token: ${ADMIN} }
notifications:
  webhooks:
    - { name: rx, url: "${o.url}", secret: ${SECRET}${o.events ? `, events: [${o.events.join(', ')}]` : ''} }
${(o.hooks ?? []).map((h) => `    - ${h}\n`).join('')}${(o.settings ?? []).map((line) => `  ${line}\n`).join('')}platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
  pool:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
${(o.accounts ?? [refused, limited]).map((a) => `      - ${a}`).join('\n')}
keys:
  - { id: q, key: ${KEY}, group: main, limits: { ${o.limits ?? 'quota_usd: 0.5'} } }
  - { id: p, key: sk-pool-0001, group: pool }
pricing:
  gpt-4o-mini: { input: 0, output: 20000 }
`;

/** One chat (max_tokens 8: what it holds against the quota is near what it costs); its status. */
export async function chat(url: string, key = KEY, headers: Record<string, string> = {}): Promise<number> {
  const res = await post(url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'Hello there, world!', { max_tokens: 8 }), { ...bearer(key), ...headers });
  await res.arrayBuffer();
  return res.status;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
