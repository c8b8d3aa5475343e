// `npm run cli-translation`: the three vendor CLIs, each once through every translated pair it can use, against a gateway
// whose groups sit on single-format simulators. Not part of the test suite (it installs the CLIs from npm, ~0.5 GB).
// Prints one line per CLI × upstream: exit code, whether the simulator's answer reached the CLI, the ledger's record.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startGateway } from '../app/gateway.ts';
import { run } from './run-process.ts';

const CACHE = process.env.GATEWAY_CLI_CACHE ?? join(homedir(), '.cache', 'gateway-clis');
const PACKAGES = ['@openai/codex', '@anthropic-ai/claude-code', '@google/gemini-cli'];
const TIMEOUT_MS = Number(process.env.GATEWAY_CLI_TIMEOUT_MS ?? 120_000);
const PROMPT = 'Reply with one short sentence: hello';
const FORMATS = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'] as const;
type Format = (typeof FORMATS)[number];

async function install(): Promise<void> {
  const bin = (name: string) => join(CACHE, 'node_modules', '.bin', name);
  if (['codex', 'claude', 'gemini'].every((b) => existsSync(bin(b)))) return;
  mkdirSync(CACHE, { recursive: true });
  process.stderr.write(`installing ${PACKAGES.join(', ')} into ${CACHE}\n`);
  const r = await run('npm', ['install', '--prefix', CACHE, '--no-audit', '--no-fund', ...PACKAGES], { cwd: CACHE, env: process.env, timeoutMs: 600_000 });
  if (r.code !== 0) throw new Error(`npm install failed:\n${r.out.slice(-2000)}`);
}

const key = (f: Format) => `sk-cli-${f}`;
const config = () => `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: cli-admin-token-0123456789abcdef0123 }
platforms:
${FORMATS.map((f) => `  sim-${f}: { simulator: true, format: [${f}] }`).join('\n')}
groups:
${FORMATS.map((f) => `  g-${f}:
    platform: sim-${f}
    models: ["*"]
    accounts: [{ id: ${f}-1, credential: cred-${f} }]`).join('\n')}
keys:
${FORMATS.map((f) => `  - { id: k-${f}, key: ${key(f)}, group: g-${f} }`).join('\n')}
pipelines:
  relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]
  gemini-relay: [{ auth: { query_key_paths: [/v1beta/] } }, group-check, model-allowlist, rate-limit, metering, proxy]
  models: [auth, { group-check: { format: false } }, { list-models: { shape_by_header: { anthropic-version: anthropic-messages, x-goog-api-client: gemini } } }]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /v1/responses, format: openai-responses, pipeline: relay }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
  - { method: POST, path: /v1/messages/count_tokens, format: anthropic-messages, pipeline: relay, billed: false }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: gemini-relay }
  - { method: POST, path: "/v1beta/models/{model}:streamGenerateContent", format: gemini, pipeline: gemini-relay }
  - { method: POST, path: "/v1beta/models/{model}:countTokens", format: gemini, pipeline: gemini-relay, billed: false }
  - { method: GET, path: /v1/models, format: openai-chat, pipeline: models }
  - { method: GET, path: /v1beta/models, format: gemini, pipeline: models }
  - { method: GET, path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
`;

/** How each CLI is pointed at the gateway with a key, by environment and flags only. */
const CLIS = {
  claude: { native: 'anthropic-messages', invoke: (url: string, k: string) => ({
    args: ['-p', PROMPT], env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: k, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }) },
  codex: { native: 'openai-responses', invoke: (url: string, k: string) => ({
    args: ['exec', '--skip-git-repo-check', '--sandbox', 'read-only', '-c', 'model_provider="gw"', '-c', 'model="gpt-5"',
      '-c', `model_providers.gw={ name = "gw", base_url = "${url}/v1", env_key = "GW_KEY", wire_api = "responses" }`, PROMPT],
    env: { GW_KEY: k, OPENAI_API_KEY: k } }) },
  gemini: { native: 'gemini', invoke: (url: string, k: string) => ({
    args: ['-p', PROMPT], env: { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: k, GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_CLI_TRUST_WORKSPACE: 'true' } }) },
} as const;

async function main(): Promise<void> {
  await install();
  const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, config());
  const gw = await startGateway({ configFile: file, host: '127.0.0.1', port: 0, env: {}, log: pino({ level: 'silent' }) });
  const rows: string[] = [];
  try {
    for (const [cli, spec] of Object.entries(CLIS)) {
      for (const up of FORMATS.filter((f) => f !== spec.native)) {
        const home = mkdtempSync(join(dir, `${cli}-${up}-`));
        // Gemini CLI takes its auth method from settings: the API key one, which reads GEMINI_API_KEY.
        mkdirSync(join(home, '.gemini'));
        writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
        const { args, env } = spec.invoke(gw.url, key(up));
        const r = await run(join(CACHE, 'node_modules', '.bin', cli), [...args], {
          cwd: home, env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', CI: '1', ...env }, timeoutMs: TIMEOUT_MS,
        });
        const usage = await fetch(`${gw.url}/admin/usage?key=k-${up}&limit=100`, { headers: { authorization: 'Bearer cli-admin-token-0123456789abcdef0123' } });
        const records = ((await usage.json()) as { records: { status: number; ending: string; input_tokens: number; output_tokens: number }[] }).records;
        const ledger = records.map((x) => `${x.status}/${x.ending}/${x.input_tokens}+${x.output_tokens}`).join(' ');
        const answered = /Echo:|Tool result:/.test(r.out);
        const firstError = r.code === 0 ? '' : (r.out.split('\n').find((l) => /error|fail|refus|invalid/i.test(l) && !/^WARNING/.test(l)) ?? r.out.split('\n').at(-2) ?? '').slice(0, 160);
        rows.push(`${cli.padEnd(7)} → ${up.padEnd(19)} exit ${String(r.code).padEnd(4)} answer ${answered ? 'yes' : 'no '}  ledger [${ledger}] ${firstError}`);
        process.stderr.write(`${rows.at(-1)}\n`);
      }
    }
  } finally {
    await gw.close();
  }
  process.stdout.write(`\n${rows.join('\n')}\n`);
}

main().then(() => process.exit(0), (err: unknown) => { process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`); process.exit(1); });
