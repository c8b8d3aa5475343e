// Starts a gateway on a config text (written to a temp file) with silent logs, closed when the test ends.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createLogger } from '../../core/log.ts';
import { startGateway, type Gateway } from '../../app/gateway.ts';

interface Teardown { teardown(fn: () => unknown): void }

export function writeConfig(yaml: string, name = 'gateway.yaml'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'gw-test-')), name);
  writeFileSync(file, yaml);
  return file;
}

/**
 * The environment a test gateway interpolates its config with: the shipped gateway.yaml keeps its embedded store at
 * ${GATEWAY_STORE_PATH:-./data/gateway.db}, in the repository, so tests keep it in memory unless they say otherwise.
 */
export const testEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ GATEWAY_STORE_PATH: ':memory:', ...env });

export async function withGateway(t: Teardown, yaml: string, env: NodeJS.ProcessEnv = {}): Promise<Gateway> {
  const gateway = await startGateway({
    configFile: writeConfig(yaml), host: '127.0.0.1', port: 0, env: testEnv(env), log: pino({ level: 'silent' }),
  });
  t.teardown(() => gateway.close());
  return gateway;
}

/** A small config on one simulator platform; tests append or replace parts as they need. */
export const demoConfig = (extra = '') => `
server: { host: 127.0.0.1, port: 0, body_limit: 64kb }
store: { path: ":memory:" }
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini, "gpt-5*"]
    model_map: { gpt-4o: gpt-4o-mini }
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
  pool-a:
    platform: sim
    dedicated: true
    models: ["*"]
    accounts:
      - { id: pool-1, credential: pool-credential-1 }
keys:
  - { id: alice, key: sk-alice-0001, group: main, pools: [pool-a] }
  - { id: bob, key: sk-bob-0002, group: main, models: [gpt-4o-mini] }
  - { id: off, key: sk-off-0003, group: main, disabled: true }
  - { id: old, key: sk-old-0004, group: main, expires_at: 2020-01-01T00:00:00Z }
pipelines:
  relay: [auth, group-check, model-allowlist, proxy]
  models: [auth, group-check, list-models]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /chat/completions, format: openai-chat, pipeline: relay, upstream_path: /v1/chat/completions }
  - { method: GET, path: /v1/models, format: openai-chat, pipeline: models }
  - { method: POST, path: /pool/v1/chat/completions, format: openai-chat, pipeline: relay, pool: pool-a, upstream_path: /v1/chat/completions }
${extra}`;

export interface LoggedRequest { req_id: string; route: string; status: number; outcome?: string; model?: string; usage?: { input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number }; [k: string]: unknown }

/** A parsed log line: pino's level number, the ISO time, the message and its fields. */
export interface LogLine { level: string; time: string; msg: string; [k: string]: unknown }

/**
 * Like withGateway, but with the gateway's own logger (core/log.ts) writing into memory: every per-request line (parsed)
 * so tests can read what the gateway observed, and every line of any kind.
 */
export async function withLoggedGateway(t: Teardown, configFile: string, env: NodeJS.ProcessEnv = {}): Promise<{ gateway: Gateway; requests: LoggedRequest[]; lines: LogLine[] }> {
  const requests: LoggedRequest[] = [];
  const lines: LogLine[] = [];
  const sink = { write(text: string) { const entry = JSON.parse(text); lines.push(entry); if (entry.msg === 'request') requests.push(entry); } };
  const gateway = await startGateway({ configFile, host: '127.0.0.1', port: 0, env: testEnv(env), log: createLogger('info', sink) });
  t.teardown(() => gateway.close());
  return { gateway, requests, lines };
}

/**
 * A gateway.yaml around one group `main` serving gpt-4o-mini (priced as shipped) through the metered relay chain on
 * POST /v1/chat/completions, the simulator its upstream unless `platform` says otherwise: the shape most end-to-end
 * tests need, with their own parts given as YAML flow-map bodies.
 */
export function chatConfig(o: {
  keyId: string; key: string; limits?: string; accounts?: number; server?: string; store?: string; platform?: string; chain?: string; routes?: string;
}): string {
  const accounts = Array.from({ length: o.accounts ?? 1 }, (_, i) => `      - { id: acct-${i + 1}, credential: upstream-credential-${i + 1} }`);
  return `
server: { host: 127.0.0.1, port: 0${o.server ? `, ${o.server}` : ''} }
store: { ${o.store ?? 'path: ":memory:"'} }
platforms:
  upstream: ${o.platform ?? '{ simulator: true }'}
groups:
  main:
    platform: upstream
    models: [gpt-4o-mini]
    accounts:
${accounts.join('\n')}
keys:
  - { id: ${o.keyId}, key: ${o.key}, group: main${o.limits ? `, limits: { ${o.limits} }` : ''} }
pricing:
  gpt-4o-mini: { input: 0.15, output: 0.60 }
pipelines:
  relay: [${o.chain ?? 'auth, group-check, model-allowlist, rate-limit, metering, proxy'}]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
${o.routes ?? ''}`;
}
