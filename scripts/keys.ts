// CLI over the admin API: `npm run keys -- create|list|revoke|enable|delete|usage`, with GATEWAY_ADMIN_TOKEN and --url / GATEWAY_URL.
import { parseArgs } from 'node:util';
import { keysTable, keyUsageText, recordsTable } from './keys-format.ts';

const HELP = `usage: npm run keys -- <command> [options]

commands:
  create --group NAME [--name N] [--rpm N] [--tpm N] [--concurrency N] [--quota-usd X]
         [--usd-5h X] [--usd-1d X] [--usd-7d X]
         [--pools A,B] [--models A,B] [--expires ISO]   issue a key; prints its plaintext once
  list                                                 list keys (config and issued): limits, spent (of the
                                                       quota), the USD windows used, last use
  revoke ID                                            disable an issued key
  enable ID                                            enable it again
  delete ID                                            delete an issued key
  usage ID [--days N] [--start-date D] [--end-date D] [--timezone TZ]
                                                       a key's totals: days 1..90, per-model dates
                                                       YYYY-MM-DD, days in an IANA zone (as /v1/usage)
  usage [--limit N] [--group G] [--model M] [--from T] [--to T]
                                                       the latest usage records

options:
  --url URL   gateway address (default: $GATEWAY_URL or http://127.0.0.1:8080)
  --json      print the API's JSON instead of tables
environment: GATEWAY_ADMIN_TOKEN (required), GATEWAY_URL`;

/** The command line, or one line saying what is wrong with it (an unknown option, a value that looks like one). */
function commandLine() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        url: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
        group: { type: 'string' }, name: { type: 'string' }, rpm: { type: 'string' }, tpm: { type: 'string' }, concurrency: { type: 'string' },
        'quota-usd': { type: 'string' }, 'usd-5h': { type: 'string' }, 'usd-1d': { type: 'string' }, 'usd-7d': { type: 'string' },
        pools: { type: 'string' }, models: { type: 'string' }, expires: { type: 'string' },
        limit: { type: 'string' }, model: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' },
        days: { type: 'string' }, 'start-date': { type: 'string' }, 'end-date': { type: 'string' }, timezone: { type: 'string' },
      },
    });
  } catch (err) {
    console.error(`error: ${(err as Error).message.split('\n')[0]} (try --help)`);
    process.exit(1);
  }
}
const { values: opt, positionals } = commandLine();

class CliError extends Error {}

const base = (opt.url ?? process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const token = process.env.GATEWAY_ADMIN_TOKEN ?? '';

async function api(method: string, path: string, body?: unknown): Promise<any> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
  } catch (err) {
    throw new CliError(`cannot reach ${base}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`);
  }
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  if (!res.ok) throw new CliError(`${json?.error?.message ?? (text || res.statusText)} (HTTP ${res.status})`);
  return json;
}

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new CliError(`--${name} must be a non-negative number, not "${value}"`);
  return n;
}

const list = (v: string | undefined) => v?.split(',').map((s) => s.trim()).filter(Boolean);
const needId = (command: string) => positionals[1] ?? (() => { throw new CliError(`${command} needs a key id`); })();
const print = (json: unknown, text: () => string) => console.log(opt.json ? JSON.stringify(json, null, 2) : text());

const COMMANDS: Record<string, () => Promise<void>> = {
  async create() {
    if (!opt.group) throw new CliError('create needs --group NAME');
    const given = [['rpm', opt.rpm], ['tpm', opt.tpm], ['concurrency', opt.concurrency], ['quota_usd', opt['quota-usd']],
      ['usd_5h', opt['usd-5h']], ['usd_1d', opt['usd-1d']], ['usd_7d', opt['usd-7d']]] as const;
    const limits = Object.fromEntries(given.map(([k, v]) => [k, number(k.replace('_', '-'), v)]).filter(([, v]) => v !== undefined));
    const body = { group: opt.group, name: opt.name, pools: list(opt.pools), models: list(opt.models), limits, expires_at: opt.expires };
    const out = await api('POST', '/admin/keys', body);
    print(out, () => `${keysTable([out.record])}\n\nkey: ${out.key}\nThis is the only time the key is shown; store it now.`);
  },
  async list() {
    const out = await api('GET', '/admin/keys');
    print(out, () => keysTable(out.keys));
  },
  async revoke() {
    const out = await api('PATCH', `/admin/keys/${encodeURIComponent(needId('revoke'))}`, { disabled: true });
    print(out, () => `key ${out.id} disabled`);
  },
  async enable() {
    const out = await api('PATCH', `/admin/keys/${encodeURIComponent(needId('enable'))}`, { disabled: false });
    print(out, () => `key ${out.id} enabled`);
  },
  async delete() {
    const out = await api('DELETE', `/admin/keys/${encodeURIComponent(needId('delete'))}`);
    print(out, () => `key ${out.id} deleted`);
  },
  async usage() {
    const id = positionals[1];
    // The gateway checks the values and answers the same errors as GET /v1/usage.
    const view = new URLSearchParams();
    for (const name of ['days', 'start-date', 'end-date', 'timezone'] as const) if (opt[name] !== undefined) view.set(name.replace('-', '_'), opt[name]!);
    if (id) {
      const out = await api('GET', `/admin/keys/${encodeURIComponent(id)}/usage${view.size ? `?${view}` : ''}`);
      return print(out, () => keyUsageText(out.key, out.usage));
    }
    if (view.size) throw new CliError('--days, --start-date, --end-date and --timezone need a key id');
    const q = new URLSearchParams();
    for (const name of ['limit', 'group', 'model', 'from', 'to'] as const) if (opt[name]) q.set(name, opt[name]!);
    const out = await api('GET', `/admin/usage${q.size ? `?${q}` : ''}`);
    print(out, () => recordsTable(out.records) + (out.cursor ? `\n(more: --json shows the cursor)` : ''));
  },
};

async function main(): Promise<number> {
  const command = positionals[0];
  if (opt.help || !command) { console.log(HELP); return command || opt.help ? 0 : 1; }
  const run = COMMANDS[command];
  try {
    if (!run) throw new CliError(`unknown command "${command}" (try --help)`);
    if (!token) throw new CliError('set GATEWAY_ADMIN_TOKEN to the gateway\'s admin token');
    await run();
    return 0;
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    console.error(`error: ${err.message}`);
    return 1;
  }
}

process.exitCode = await main();
