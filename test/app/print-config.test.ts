// node app/main.ts --print-config: the effective file as YAML on stdout (the operator's sections, the routes and
// pipelines as they run), each section, route and pipeline with where it came from, and no secret's value anywhere.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { defaults, parts } from '../../app/registry.ts';
import { loadConfig } from '../../core/config.ts';
import { writeConfig } from '../helpers/gateway.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHIPPED = join(ROOT, 'gateway.yaml');
const SECRETS = {
  GATEWAY_ADMIN_TOKEN: 'admin-token-secret-0123456789abcdef0123',
  OPENAI_API_KEY: 'sk-openai-secret-value',
  OPENAI_USER_KEY: 'sk-user-secret-value',
  REDIS_URL: 'rediss://gw-user:redis-password-secret@redis.example:6380/0',
  DEMO_KEY: 'sk-demo-secret-override',
};
const print = (config: string, env: NodeJS.ProcessEnv = {}) => {
  const r = spawnSync(process.execPath, ['app/main.ts', '--print-config', '--config', config], {
    cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, ...env }, timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
/** The text of line `n` (1-based) of a file. */
const lineOf = (file: string, n: number) => readFileSync(file, 'utf8').split('\n')[n - 1] ?? '';

t.test('the shipped file: valid YAML of every route and pipeline that runs, each line saying where it was written', async (t) => {
  const r = print(SHIPPED, SECRETS);
  t.equal(r.code, 0, r.stderr);
  const printed = parse(r.stdout) as { routes: { method: string; path: string }[]; pipelines: Record<string, unknown>; [k: string]: unknown };
  const { config, layout } = loadConfig(SHIPPED, { ...parts, env: SECRETS });
  t.strictSame(printed.routes.map((x) => `${x.method} ${x.path}`), config.routes.map((x) => `${x.method} ${x.path}`), 'the routes that run, in order');
  t.strictSame(printed.pipelines, layout.raw.pipelines, 'the pipelines as written');
  t.strictSame(Object.keys(printed).sort(), ['admin', 'groups', 'keys', 'pipelines', 'platforms', 'pricing', 'routes', 'server', 'store']);

  const files: Record<string, string> = { 'gateway.yaml': SHIPPED, 'defaults.yaml': defaults };
  const routeLines = r.stdout.split('\n').filter((l) => /^ {2}- \{ method: /.test(l));
  t.equal(routeLines.length, config.routes.length, 'one line per route');
  for (const line of routeLines) {
    const [, file, n] = /# from (gateway\.yaml|defaults\.yaml):(\d+)$/.exec(line) ?? [];
    const path = /path: "?([^",]+)"?,/.exec(line)?.[1];
    t.ok(file && path && lineOf(files[file], Number(n)).includes(path), `${path}: its line ${file}:${n} declares it`);
  }
  t.ok(routeLines.some((l) => l.includes('# from gateway.yaml:')) && routeLines.some((l) => l.includes('# from defaults.yaml:')), 'from both files');
  for (const name of Object.keys(printed.pipelines)) {
    const [, n] = new RegExp(`^ {2}${name}: .* # from defaults\\.yaml:(\\d+)$`, 'm').exec(r.stdout) ?? [];
    t.match(lineOf(defaults, Number(n)), new RegExp(`^ {2}${name}:`), `pipeline ${name}: defaults.yaml:${n}`);
  }
  t.match(r.stdout, /# from gateway\.yaml:\d+\nplatforms:/, 'a section of the file says its line');
  t.match(r.stdout, /# from defaults\.yaml \(gateway\.yaml has no pipelines:\)\npipelines:/, 'a section the file leaves out says so');
  t.match(r.stdout, /# from defaults\.yaml, changed by gateway\.yaml:\d+\nroutes:/, 'an extended section says both');
});

t.test('no secret is printed: keys, tokens, credentials and a URL\'s password are masked, empty ones stay empty', async (t) => {
  const r = print(SHIPPED, SECRETS);
  t.equal(r.code, 0);
  for (const [name, value] of Object.entries(SECRETS)) {
    t.notMatch(r.stdout + r.stderr, value.includes('redis-password') ? 'redis-password-secret' : value, `${name} is not printed`);
  }
  t.notMatch(r.stdout, /demo-upstream-credential/, 'literal credentials of the file are masked too');
  const printed = parse(r.stdout) as any;
  t.equal(printed.admin.token, '***');
  t.equal(printed.store.redis, 'rediss://***@redis.example:6380/0', 'the URL stays readable, its user and password gone');
  t.equal(printed.groups['openai-main'].accounts[0].credential, '***');
  t.equal(printed.groups['anthropic-main'].accounts[0].credential, '', 'an unset credential: empty (the account is off)');
  t.equal(printed.keys.find((k: { id: string }) => k.id === 'openai-user').key, '***');
  t.equal(printed.keys.find((k: { id: string }) => k.id === 'gemini-user').key, '');
});

t.test('credential_file: the path is printed, never what the file holds', async (t) => {
  const file = writeConfig(`platforms:
  sim: { simulator: true }
groups:
  g: { platform: sim, models: ["*"], accounts: [{ id: a, credential_file: ./secret }] }
routes: { extends: default, remove: [/docs] }
`);
  writeFileSync(join(dirname(file), 'secret'), 'sk-from-a-mounted-secret\n');
  const r = print(file);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, '{ id: a, credential_file: ./secret }');
  t.notMatch(r.stdout, 'sk-from-a-mounted-secret');
  t.notMatch(r.stdout, /path: \/docs,/, 'the removed route is not among them');
});

t.test('a file with problems: nothing on stdout, its problems on stderr, exit 1; --help lists the flag', async (t) => {
  const bad = writeConfig('routes: { extends: default, remove: [/nowhere] }\n');
  const r = print(bad);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  t.equal(r.stderr, 'gateway.yaml:1:38 routes.remove.0: "/nowhere" is not a default route: name the path of one (every method) or "METHOD /path"\n');
  const help = spawnSync(process.execPath, ['app/main.ts', '--help'], { cwd: ROOT, encoding: 'utf8' });
  t.match(help.stdout, /--print-config\s+print the effective config/);
});
