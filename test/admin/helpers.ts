// Shared by the admin, CLI and browser tests: a metered config with the admin API and pages, and small admin-API calls.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Gateway } from '../../app/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';

export const ADMIN = 'admin-secret-token-0123456789abcdef';

/**
 * One simulator platform and the default routes (metered relay, /v1/usage, the admin API and the pages), the store in
 * memory unless `store` says otherwise. Prices are high so every request costs a visible amount at six decimals.
 */
export const adminConfig = (opts: { token?: string; store?: string; authCacheMs?: number } = {}) => `
server: { host: 127.0.0.1, port: 0, body_limit: 64kb }
${opts.store ?? 'store: { path: ":memory:" }'}
admin: { token: "${opts.token ?? ADMIN}" }
platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini, "gpt-5*"]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
  other:
    platform: sim
    rate_multiplier: 2
    models: [gpt-4o-mini, "gpt-5*"]
    accounts:
      - { id: sim-2, credential: upstream-credential-2 }
  pool-a:
    platform: sim
    dedicated: true
    models: ["*"]
    accounts:
      - { id: pool-1, credential: pool-credential-1 }
keys:
  - { id: alice, key: sk-alice-0001, group: main, pools: [pool-a] }
  - { id: capped, key: sk-capped-0002, group: main, limits: { quota_usd: 5, usd_5h: 1, usd_1d: 2, usd_7d: 3 } }
  - { id: old, key: sk-old-0004, group: main, expires_at: 2020-01-01T00:00:00Z }
pricing:
  gpt-4o-mini: { input: 1000, output: 2000 }
  "gpt-5*": { input: 3000, output: 4000 }
pipelines:
  extends: default
  add:
    relay: [{ auth: { issued_cache_ms: ${opts.authCacheMs ?? 10_000} } }, group-check, model-allowlist, rate-limit, metering, proxy]
`;

export interface AdminCall { status: number; body: any; headers: Headers }

/** Call the admin API (with the admin token unless another Authorization is given). */
export async function admin(gw: Gateway | string, method: string, path: string, body?: unknown, auth: string | null = ADMIN): Promise<AdminCall> {
  const base = typeof gw === 'string' ? gw : gw.url;
  const res = await fetch(base + path, {
    method,
    headers: { ...(auth === null ? {} : bearer(auth)), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** Issue a key; fails loudly when the API refuses. */
export async function issue(gw: Gateway | string, body: Record<string, unknown>): Promise<{ key: string; record: any }> {
  const res = await admin(gw, 'POST', '/admin/keys', body);
  if (res.status !== 201) throw new Error(`issue failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A chat through the gateway with this key; returns the HTTP status. */
export async function chat(gw: Gateway | string, key: string, model = 'gpt-4o-mini', content = 'Hello there, world!'): Promise<number> {
  const res = await post((typeof gw === 'string' ? gw : gw.url) + '/v1/chat/completions', chatBody(model, content), bearer(key));
  await res.arrayBuffer();
  return res.status;
}

/** Settlement finishes just after the response; poll until the condition holds (or give up after `ms`). */
export async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, ms = 2000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface CliRun { code: number; stdout: string; stderr: string }

/** The keys CLI (scripts/keys.ts) as an operator runs it, against `gw` unless other environment is given. */
export function keysCli(gw: Gateway): (args: string[], env?: Record<string, string>) => Promise<CliRun> {
  const script = fileURLToPath(new URL('../../scripts/keys.ts', import.meta.url));
  return (args, env = { GATEWAY_ADMIN_TOKEN: ADMIN, GATEWAY_URL: gw.url }) => new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
