// `npm run record-clients [claude-code|claude-code-default|codex-cli|gemini-cli...]`: runs Claude Code (with a named
// model, and with its default one), Codex CLI and Gemini CLI (the versions pinned below: a newer one is recorded by
// changing its version here) once each, headless with a one-line prompt, against the built-in simulator, and writes the
// main request each sent (the generation request with the most tools) to test/fixtures/clients/<client>-<version>.json,
// the recordings the tests read. Credentials are replaced, the CLI's home folder becomes /home/user, long texts are
// replaced by their length and long lists of objects cut to two items, so the files stay small and hold no prompt text
// of the CLI's own. Not part of the test suite: it installs the CLIs from npm.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator, type RecordedRequest } from '../simulator/server.ts';
import { run } from './run-process.ts';

export const CACHE = join(process.env.GATEWAY_CLI_CACHE ?? join(homedir(), '.cache', 'gateway-clis'), 'recorded');
const OUT = new URL('../test/fixtures/clients/', import.meta.url);
export const TIMEOUT_MS = Number(process.env.GATEWAY_CLI_TIMEOUT_MS ?? 120_000);
const PROMPT = 'List the files here.';
const KEY = 'sk-example';
/** Texts longer than this are replaced by `<text, N chars>`. */
const LONG_TEXT = 120;
/** Lists of objects longer than this keep their first items and a `<N more items of the same kind>` marker. */
const KEPT_ITEMS = 2;
/** Lists up to this long are kept whole. */
const SHORT_LIST = 3;

export interface Client {
  /** The fixture's name, before the version. */
  name: string;
  pkg: string;
  version: string;
  bin: string;
  /** Where its generation requests go. */
  generates: RegExp;
  /** Its arguments and environment for a headless run against `url` with `key` (the prompt `prompt`). */
  invoke(url: string, key?: string, prompt?: string): { args: string[]; env: Record<string, string> };
}

export const CLIENTS: Client[] = [
  {
    name: 'claude-code', pkg: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'claude', generates: /^\/v1\/messages(\?|$)/,
    invoke: (url, key = KEY, prompt = PROMPT) => ({ args: ['--model', 'claude-sonnet-4-5', '-p', prompt], env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: key, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }),
  },
  {
    // The same CLI with its default model (no --model), which sends a role "system" message with output_config inside messages.
    name: 'claude-code-default', pkg: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'claude', generates: /^\/v1\/messages(\?|$)/,
    invoke: (url, key = KEY, prompt = PROMPT) => ({ args: ['-p', prompt], env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: key, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } }),
  },
  {
    name: 'codex-cli', pkg: '@openai/codex', version: '0.169.0', bin: 'codex', generates: /^\/v1\/responses(\?|$)/,
    invoke: (url, key = KEY, prompt = PROMPT) => ({
      args: ['exec', '--skip-git-repo-check', '--sandbox', 'read-only', '-c', 'model_provider="gw"', '-c', 'model="gpt-5"',
        '-c', `model_providers.gw={ name = "gw", base_url = "${url}/v1", env_key = "GW_KEY", wire_api = "responses" }`, prompt],
      env: { GW_KEY: key, OPENAI_API_KEY: key },
    }),
  },
  {
    name: 'gemini-cli', pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini', generates: /:(stream)?generateContent(\?|$)/i,
    // A named model: its default, auto, first asks a classifier model which one to use.
    invoke: (url, key = KEY, prompt = PROMPT) => ({ args: ['-m', 'gemini-2.5-flash', '-p', prompt], env: { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: key, GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_CLI_TRUST_WORKSPACE: 'true' } }),
  },
];

const installed = (c: Client): string | undefined => {
  const file = join(CACHE, 'node_modules', c.pkg, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : undefined;
};

/** Installs the pinned CLIs into the cache unless they are there already. */
export async function install(): Promise<void> {
  if (CLIENTS.every((c) => installed(c) === c.version)) return;
  mkdirSync(CACHE, { recursive: true });
  const specs = [...new Set(CLIENTS.map((c) => `${c.pkg}@${c.version}`))];
  process.stderr.write(`installing ${specs.join(', ')} into ${CACHE}\n`);
  const r = await run('npm', ['install', '--prefix', CACHE, '--no-audit', '--no-fund', '--no-save', ...specs], { cwd: CACHE, env: process.env, timeoutMs: 600_000 });
  if (r.code !== 0) throw new Error(`npm install failed:\n${r.out.slice(-2000)}`);
}

/**
 * One headless run of a CLI in `home` (its working folder and HOME, made fresh by the caller) against `url` with `key`:
 * its exit code, its output (stdout and stderr together) and its stdout alone (where the CLIs print their answer).
 */
export async function runClient(c: Client, home: string, url: string, key = KEY, prompt = PROMPT): Promise<{ code: number | null; out: string; stdout: string }> {
  // Gemini CLI takes its auth method from settings: the API key one, which reads GEMINI_API_KEY.
  mkdirSync(join(home, '.gemini'), { recursive: true });
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  const { args, env } = c.invoke(url, key, prompt);
  return run(join(CACHE, 'node_modules', '.bin', c.bin), args, { cwd: home, env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', CI: '1', ...env }, timeoutMs: TIMEOUT_MS });
}

const CREDENTIAL_HEADERS: Record<string, string> = { authorization: `Bearer ${KEY}`, 'x-api-key': KEY, 'x-goog-api-key': KEY };

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A text with the CLI's home folder and the recording user's own (a CLI may read it from the system) made /home/user. */
export function neutral(text: string, home: string, own = homedir()): string {
  const folders = [home, own].filter((f) => f.length > 1).map(escape).join('|');
  return folders ? text.replace(new RegExp(`(${folders})(?![\\w.-])`, 'g'), '/home/user') : text;
}

/** What a recording keeps of a value: home folders made neutral, long texts as their length, long object lists cut. */
export function reduce(value: unknown, home: string): unknown {
  if (typeof value === 'string') {
    const text = neutral(value, home);
    return text.length > LONG_TEXT ? `<text, ${text.length} chars>` : text;
  }
  if (Array.isArray(value)) {
    const items = value.map((v) => reduce(v, home));
    const objects = value.every((v) => v !== null && typeof v === 'object');
    if (!objects || items.length <= SHORT_LIST) return items;
    return [...items.slice(0, KEPT_ITEMS), `<${items.length - KEPT_ITEMS} more items of the same kind>`];
  }
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reduce(v, home)]));
  return value;
}

/** The recording of one request: credentials replaced in headers and query, the rest reduced. */
export function recording(client: string, request: RecordedRequest, home: string): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'host') continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    headers[name] = CREDENTIAL_HEADERS[name] ?? neutral(text, home);
  }
  const url = request.path.replace(/([?&]key=)[^&]*/, `$1${KEY}`);
  return {
    what: `One real request of ${client} as it reached an upstream, run headless with a one-line prompt; long texts are replaced by their length, long lists cut to two items. Credentials replaced.`,
    method: request.method, url, headers, body: reduce(JSON.parse(request.body), home),
  };
}

/** Whether a file is a recording of this client: claude-code-2.1.330.json is claude-code's, claude-code-default-2.1.330.json is not. */
export const isRecordingOf = (client: string, file: string): boolean => new RegExp(`^${escape(client)}-\\d[\\w.-]*\\.json$`).test(file);

const toolCount = (r: RecordedRequest): number => {
  const body = JSON.parse(r.body) as { tools?: { functionDeclarations?: unknown[] }[] };
  return (body.tools ?? []).reduce((n, t) => n + (Array.isArray(t.functionDeclarations) ? t.functionDeclarations.length : 1), 0);
};

async function main(): Promise<void> {
  await install();
  mkdirSync(OUT, { recursive: true });
  const sim = await startSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-record-'));
  try {
    const only = process.argv.slice(2);
    for (const c of CLIENTS.filter((x) => only.length === 0 || only.includes(x.name))) {
      const version = c.version;
      const home = mkdtempSync(join(dir, `${c.name}-`));
      sim.clear();
      const r = await runClient(c, home, sim.url);
      const sent = sim.requests.filter((q) => q.method === 'POST' && c.generates.test(q.path));
      if (sent.length === 0) throw new Error(`${c.name} ${version} sent no generation request (exit ${r.code}):\n${r.out.slice(-2000)}`);
      const main = sent.reduce((best, q) => (toolCount(q) > toolCount(best) ? q : best));
      for (const old of readdirSync(OUT)) if (isRecordingOf(c.name, old)) unlinkSync(new URL(old, OUT));
      const file = `${c.name}-${version}.json`;
      writeFileSync(new URL(file, OUT), `${JSON.stringify(recording(`${c.name}-${version}`, main, home), null, 2)}\n`);
      process.stderr.write(`${file}: ${main.method} ${main.path}, ${toolCount(main)} tools, ${sent.length} generation requests, exit ${r.code}\n`);
    }
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main().then(() => process.exit(0), (err: unknown) => { process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`); process.exit(1); });
