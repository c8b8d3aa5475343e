// The command line as a person meets it: --help, --version, an unknown flag, a taken port, a Node too old (the
// machine's /usr/bin/node when it is one), each a real process.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { demoConfig, writeConfig } from '../helpers/gateway.ts';
import { gatewayProcess } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const run = (args: string[], o: { node?: string; entry?: string } = {}) => {
  const r = spawnSync(o.node ?? process.execPath, [o.entry ?? 'app/main.ts', ...args], {
    cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, GATEWAY_STORE_PATH: ':memory:', LOG_LEVEL: 'warn' }, timeout: 20_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

t.test('--help and -h print the usage on stdout, exit 0', async (t) => {
  for (const flag of ['--help', '-h']) {
    const r = run([flag]);
    t.equal(r.code, 0, flag);
    t.match(r.stdout, /^Usage: /);
    t.match(r.stdout, /--config FILE[\s\S]*--check[\s\S]*--port N[\s\S]*--version/);
    t.equal(r.stderr, '');
  }
});

t.test('--version and -v print package.json\'s version, exit 0; /healthz and the startup line say it too', async (t) => {
  for (const flag of ['--version', '-v']) t.strictSame(run([flag]), { code: 0, stdout: `${VERSION}\n`, stderr: '' }, flag);
  const gw = await gatewayProcess(t, writeConfig(demoConfig().replace(/^admin: .*$/m, '')), { env: { LOG_LEVEL: 'info' } });
  t.strictSame(await (await fetch(gw.url + '/healthz')).json(), { status: 'ok', version: VERSION });
  const line = gw.stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.msg.startsWith('gateway listening'));
  t.equal(line?.version, VERSION, 'the listening line');
  t.match(line, { admin: 'off', msg: /, admin API off$/ }, 'and that a config with no admin token has no admin API');
});

t.test('an unknown flag or a stray argument: the usage on stderr, exit 2, no stack trace', async (t) => {
  for (const args of [['--bogus'], ['gateway.yaml'], ['--port']]) {
    const r = run(args);
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stdout, '');
    t.match(r.stderr, /Usage: /);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
  t.match(run(['--bogus']).stderr, /^Unknown option '--bogus'/);
});

t.test('a port another process holds: one line naming it and how to pick another, exit 1, no stack', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const port = (holder.address() as { port: number }).port;
  const r = run(['--config', writeConfig(demoConfig()), '--port', String(port), '--host', '127.0.0.1']);
  t.equal(r.code, 1);
  t.equal(r.stderr, `port ${port} on 127.0.0.1 is in use by another process: stop it, or pick another port with --port N (or PORT=N with the shipped gateway.yaml)\n`);
  t.notMatch(r.stdout, /"err"|\n\s+at /, 'no fatal log with a stack');
});

const old = '/usr/bin/node';
const oldEnough = existsSync(old) && Number(spawnSync(old, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout) < 22;
t.test('a Node older than 22.18: app/start.js and the preinstall script stop with one line, exit 1', { skip: !oldEnough && `no old Node at ${old}` }, async (t) => {
  const oneLine = /^model-gateway needs Node 22\.18 or newer .*this is Node \d+\.\d+\.\d+ .*nvm install 24.*\n$/;
  const start = run(['--config', writeConfig(demoConfig())], { node: old, entry: 'app/start.js' });
  t.equal(start.code, 1, 'app/start.js');
  t.match(start.stderr, oneLine);
  t.notMatch(start.stderr, /ERR_UNKNOWN_FILE_EXTENSION/);
  const pre = run([], { node: old, entry: 'scripts/check-node.cjs' });
  t.equal(pre.code, 1, 'scripts/check-node.cjs');
  t.match(pre.stderr, oneLine);
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  t.equal(pkg.scripts.preinstall, 'node scripts/check-node.cjs', 'npm install runs it first');
});

t.test('the check passes quietly on this Node', async (t) => {
  t.strictSame(run([], { entry: 'scripts/check-node.cjs' }), { code: 0, stdout: '', stderr: '' });
});
