// `npm run cli-kinds`: the three vendor CLIs (the versions record-clients pins) against a gateway whose two groups serve
// Claude from the simulator playing Bedrock (SigV4 verified) and the one playing Vertex AI (a service-account token),
// one key per group; Codex's gpt-5 and Gemini CLI's gemini-2.5-flash are mapped to the Claude model. Prints CLI × group
// → exit code, the simulator's model calls, the answer's start, whether a tool round trip happened (when the CLI sent
// tools), and whether the usage records show tokens; exits 1 if any cell failed. Not part of the test suite: it
// installs the CLIs from npm. One CLI runs at a time.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startGateway } from '../app/gateway.ts';
import type { RecordedRequest } from '../simulator/server.ts';
import { CLIENTS, install, runClient } from './record-clients.ts';

const ADMIN = 'cli-kinds-admin-token-0123456789abcdef';
const PROMPT = 'Say hello in one short sentence.';
const AWS_KEY_ID = 'AKIASIMULATEDCLI0001';
const AWS_SECRET = 'cliKindsSimulatedSecretAccessKey0000000001';
const SA_EMAIL = 'gateway-cli@my-project.iam.gserviceaccount.com';

/** The upstream model ids every client name of a CLI maps to, per group, in each cloud's id form (the simulators take any id). */
const UPSTREAM = {
  bedrock: {
    sonnet: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', opus: 'us.anthropic.claude-opus-5-5-v1', haiku: 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
  },
  vertex: { sonnet: 'claude-sonnet-4-5@20250929', opus: 'claude-opus-5-5', haiku: 'claude-haiku-4-5@20251001' },
} as const;
type Group = keyof typeof UPSTREAM;
const GROUPS = Object.keys(UPSTREAM) as Group[];

/** Client names → upstream family: the CLIs' own names (Claude Code 2.1.330's default, claude-opus-5-5, and its small model included). */
const NAMES: Record<string, keyof (typeof UPSTREAM)['bedrock']> = {
  'claude-sonnet-4-5': 'sonnet', 'claude-sonnet-4-5-20250929': 'sonnet', 'claude-opus-5-5': 'opus',
  'claude-haiku-4-5': 'haiku', 'claude-haiku-4-5-20251001': 'haiku', 'gpt-5': 'sonnet', 'gemini-2.5-flash': 'sonnet', 'gemini-2.5-flash-lite': 'haiku',
};

const modelMap = (g: Group) => `{ ${Object.entries(NAMES).map(([name, family]) => `"${name}": "${UPSTREAM[g][family]}"`).join(', ')} }`;

const config = (keyFile: string) => `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: ${ADMIN} }
platforms:
  bedrock: { kind: bedrock, region: us-east-1, simulator: true, simulator_aws_keys: { ${AWS_KEY_ID}: "${AWS_SECRET}" } }
  vertex: { kind: vertex, project: my-project, region: us-east5, simulator: true }
groups:
  bedrock:
    platform: bedrock
    models: ["claude-*", gpt-5, "gemini-2.5-flash*"]
    model_map: ${modelMap('bedrock')}
    accounts:
      - { id: aws-1, credential_source: { type: aws, access_key_id: ${AWS_KEY_ID}, secret_access_key: "${AWS_SECRET}" } }
  vertex:
    platform: vertex
    models: ["claude-*", gpt-5, "gemini-2.5-flash*"]
    model_map: ${modelMap('vertex')}
    accounts:
      - { id: vertex-sa-1, credential_source: { type: google-service-account, key: "${keyFile}" } }
keys:
${GROUPS.map((g) => `  - { id: k-${g}, key: sk-cli-kinds-${g}-0001, group: ${g} }`).join('\n')}
`;

interface UsageRecord { route: string; model: string; upstream_model: string; status: number; ending: string; input_tokens: number; output_tokens: number }

/** The simulator's model calls (not its token endpoint or the credential check). */
const modelCalls = (requests: RecordedRequest[]) => requests.filter((r) => r.method === 'POST' && /^\/model\/|\/publishers\//.test(r.path));

const bodyOf = (r: RecordedRequest): Record<string, any> => { try { return JSON.parse(r.body) as Record<string, any>; } catch { return {}; } };

/** Whether the CLI declared tools, and whether a tool's result came back to the model (the simulator calls a tool when offered). */
function toolTurn(calls: RecordedRequest[]): 'n/a' | 'yes' | 'no' {
  const bodies = calls.map(bodyOf);
  if (!bodies.some((b) => Array.isArray(b.tools) && b.tools.length > 0)) return 'n/a';
  const returned = bodies.some((b) => Array.isArray(b.messages) && b.messages.some((m: any) => Array.isArray(m.content) && m.content.some((c: any) => c?.type === 'tool_result')));
  return returned ? 'yes' : 'no';
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

async function main(): Promise<void> {
  await install();
  const dir = mkdtempSync(join(tmpdir(), 'gw-cli-kinds-'));
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = join(dir, 'vertex-sa.json');
  // token_uri a path: the platform's own origin, the simulator's token endpoint.
  writeFileSync(keyFile, JSON.stringify({
    type: 'service_account', project_id: 'my-project', private_key_id: 'kid-cli', client_email: SA_EMAIL, client_id: '1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), token_uri: '/token',
  }));
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, config(keyFile));
  const gw = await startGateway({ configFile, host: '127.0.0.1', port: 0, env: {}, log: pino({ level: process.env.GATEWAY_LOG_LEVEL ?? 'silent' }) });
  gw.simulators.vertex.vertex!.trust(SA_EMAIL, publicKey);
  const header = ['CLI', 'group', 'exit', 'upstream', 'tool turn', 'usage tokens', 'answer (first 80 chars)'];
  const rows: string[][] = [];
  let failed = false;
  try {
    for (const c of CLIENTS) {
      for (const g of GROUPS) {
        const sim = gw.simulators[g];
        sim.clear();
        const home = mkdtempSync(join(dir, `${c.name}-${g}-`));
        const started = Date.now();
        const r = await runClient(c, home, gw.url, `sk-cli-kinds-${g}-0001`, PROMPT);
        // A record is written as the answer ends; the CLI may exit a moment before the last one is stored.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const res = await fetch(`${gw.url}/admin/usage?key=k-${g}&from=${started}&limit=500`, { headers: { authorization: `Bearer ${ADMIN}` } });
        const records = ((await res.json()) as { records: UsageRecord[] }).records;
        const generated = records.filter((x) => !/count/.test(x.route));
        const counted = generated.filter((x) => x.status < 300 && x.input_tokens > 0 && x.output_tokens > 0).length;
        const calls = modelCalls(sim.requests);
        const tools = toolTurn(calls);
        const answer = oneLine(r.stdout).slice(0, 80);
        const ok = r.code === 0 && calls.length > 0 && /Echo:|Tool result:/.test(r.stdout) && tools !== 'no'
          && generated.length > 0 && counted === generated.length;
        if (!ok) failed = true;
        rows.push([c.name, g, String(r.code), String(calls.length), tools, `${counted}/${generated.length}`, answer]);
        process.stderr.write(`${ok ? 'pass' : 'FAIL'} ${c.name} × ${g}: exit ${r.code}, ${calls.length} upstream, tools ${tools}, usage ${counted}/${generated.length} [${generated.map((x) => `${x.model}→${x.upstream_model} ${x.status}/${x.ending}/${x.input_tokens}+${x.output_tokens}`).join('; ')}]\n`);
        if (!ok) process.stderr.write(`${r.out.slice(-3000)}\n`);
      }
    }
  } finally {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  process.stdout.write(`${[line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n')}\n`);
  if (failed) process.exitCode = 1;
}

main().then(() => process.exit(process.exitCode ?? 0), (err: unknown) => { process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
