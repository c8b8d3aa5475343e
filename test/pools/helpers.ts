// Shared by the account-pool tests: a config with one pool group on the simulator, a gateway that keeps every log line,
// and readers for what each account (credential) received upstream.
import { createLogger } from '../../core/log.ts';
import { startGateway, type Gateway } from '../../app/gateway.ts';
import type { RecordedRequest } from '../../simulator/server.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { frontProxy } from '../helpers/upstream.ts';

interface Teardown { teardown(fn: () => unknown): void }

export const KEY = 'sk-pool-0001';
export const auth = { authorization: `Bearer ${KEY}` };

export interface PoolAccount { id: string; credential: string; priority?: number; concurrency?: number; base_url?: string; models?: string[]; model_map?: Record<string, string> }

const flow = (a: PoolAccount) => `{ ${Object.entries(a).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')} }`;

/** One group `pool` on the simulator with these accounts; every route the tests use, metered, the proxy with `proxy` options. */
export const poolConfig = (accounts: PoolAccount[], proxy = '{}', extra = '') => `
server: { host: 127.0.0.1, port: 0, body_limit: 1mb }
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  sim: { simulator: true }
groups:
  pool:
    platform: sim
    models: ["*"]
    accounts:
${accounts.map((a) => `      - ${flow(a)}`).join('\n')}
keys:
  - { id: pool-key, key: ${KEY}, group: pool }
pricing:
  "*": { input: 1, output: 1 }
pipelines:
  relay: [auth, group-check, model-allowlist, metering, { proxy: ${proxy} }]
  read: [auth, group-check, { proxy: ${proxy} }]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /v1/responses, format: openai-responses, pipeline: relay }
  - { method: GET,  path: "/v1/responses/{id}", format: openai-responses, pipeline: read }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
  - { method: POST, path: "/v1beta/models/{model}:streamGenerateContent", format: gemini, pipeline: relay }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: relay }
  - { method: GET,  path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
${extra}`;

export interface LogLine { level: string; msg: string; [k: string]: unknown }

/** A gateway on `yaml` whose log lines (every level) are kept, parsed. */
export async function poolGateway(t: Teardown, yaml: string): Promise<{ gateway: Gateway; logs: LogLine[]; file: string }> {
  const logs: LogLine[] = [];
  const file = writeConfig(yaml);
  const sink = { write(line: string) { logs.push(JSON.parse(line)); } };
  const gateway = await startGateway({ configFile: file, host: '127.0.0.1', port: 0, env: {}, log: createLogger('info', sink) });
  t.teardown(() => gateway.close());
  return { gateway, logs, file };
}

/** The upstream credential a recorded request carried (any of the three vendor styles). */
export function credentialOf(r: RecordedRequest): string {
  const h = r.headers;
  const bearer = /^Bearer (.*)$/.exec(String(h.authorization ?? ''))?.[1];
  return String(bearer ?? h['x-api-key'] ?? h['x-goog-api-key'] ?? '');
}

/** The request log line of one request id (written when the request ends). */
export async function requestLog(logs: LogLine[], id: string, timeoutMs = 3000): Promise<LogLine> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = logs.find((l) => l.msg === 'request' && l.req_id === id);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no request log line for ${id}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Usage records from the admin API, newest first. */
export async function records(gateway: Gateway): Promise<Record<string, any>[]> {
  const res = await fetch(`${gateway.url}/admin/usage?limit=500`, { headers: { authorization: 'Bearer admin-secret-token-0123456789abcdef' } });
  return ((await res.json()) as { records: Record<string, any>[] }).records;
}

export const chat = (content = 'Hello there', extra: Record<string, unknown> = {}) =>
  ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

export function postJson(gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body: JSON.stringify(body) });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fault proxy in front of an upstream (`target`, read per request): requests whose credential is in `failing` get that
 * status (with `retry-after` when given), the rest are forwarded untouched. Lets a test make one account of a pool fail at a moment it chooses.
 */
export async function faultProxy(t: Teardown, target: () => string): Promise<{ url: string; failing: Map<string, { status: number; retryAfter?: number }>; seen: string[] }> {
  const failing = new Map<string, { status: number; retryAfter?: number }>();
  const seen: string[] = [];
  const url = await frontProxy(t, target, (req, res) => {
    const credential = /^Bearer (.*)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? String(req.headers['x-api-key'] ?? '');
    seen.push(credential);
    const fault = failing.get(credential);
    if (!fault) return false;
    req.resume();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
    res.writeHead(fault.status, headers).end(JSON.stringify({ error: { message: `fault proxy: ${fault.status}`, type: 'requests', param: null, code: null } }));
    return true;
  });
  return { url, failing, seen };
}
