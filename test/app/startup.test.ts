// Start-up output of a real `node app/main.ts`: the accounts waiting for their variables in one line, once (one process
// or a cluster), as a JSON line; the "listening" line naming the address actually bound and whether the admin API is
// on; under workers: N, each worker's lines naming it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { demoConfig, writeConfig } from '../helpers/gateway.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WARNING = 'disabled until their variables are set: account sim-1 of group main (UPSTREAM_CRED)';

/** A gateway process on a config whose first account has no credential; its output as it comes, stopped at the end. */
function start(t: Test, opts: { host: string; workers?: number }) {
  const yaml = demoConfig()
    .replace('credential: upstream-credential-1', 'credential: "${UPSTREAM_CRED:-}"')
    .replace('host: 127.0.0.1, port: 0,', `host: "${opts.host}", port: 0, workers: ${opts.workers ?? 1},`);
  const child = spawn(process.execPath, ['app/main.ts', '--config', writeConfig(yaml)], {
    cwd: ROOT, env: { PATH: process.env.PATH, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => { out.stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { out.stderr += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited; } });
  const json = () => out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
  const listening = () => json().filter((l) => l.msg.startsWith('gateway listening'));
  /** Lines saying `text`: JSON ones on stdout and plain ones on stderr. */
  const count = (text: string) => json().filter((l) => l.msg === text).length + out.stderr.split(text).length - 1;
  const stop = async () => { child.kill('SIGTERM'); return exited; };
  return { child, out, json, listening, count, stop };
}

t.test('one process: the waiting accounts in one line, as JSON; the listening line names the bound address and the admin API', async (t) => {
  const gw = start(t, { host: '127.0.0.1' });
  const [line] = await eventually(async () => gw.listening(), (l) => l.length > 0, 15_000);
  t.ok(line, `listening (output: ${gw.out.stdout}${gw.out.stderr})`);
  t.match(line.address, /^127\.0\.0\.1:\d+$/);
  t.not(line.address, '127.0.0.1:0', 'the port given, not the 0 asked for');
  t.equal(line.msg, `gateway listening on ${line.address}, admin API on`, 'the config has an admin token');
  t.equal(line.admin, 'on');
  t.equal((await fetch(`http://${line.address}/healthz`)).status, 200, 'the gateway answers there');
  t.equal(gw.count(WARNING), 1, 'the line is printed once');
  const warning = gw.json().find((l) => l.msg === WARNING)!;
  t.equal(warning.level, 'warn', 'at warn, by name');
  t.strictSame(warning.disabled, [{ kind: 'account', id: 'sim-1', group: 'main', variables: ['UPSTREAM_CRED'] }], 'and as data');
  t.notOk(gw.json().some((l) => 'worker' in l), 'one process: no worker field');
  t.match(warning.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.equal(gw.out.stderr, '', 'nothing on stderr');
  t.equal(await gw.stop(), 0, 'SIGTERM: drained and exited 0');
});

t.test('a wildcard host is logged as bound, not as a loopback URL', async (t) => {
  const gw = start(t, { host: '0.0.0.0' });
  const [line] = await eventually(async () => gw.listening(), (l) => l.length > 0, 15_000);
  t.match(line?.address, /^0\.0\.0\.0:\d+$/, `listening (output: ${gw.out.stdout}${gw.out.stderr})`);
  t.equal(await gw.stop(), 0);
});

t.test('two workers: the line once at start and once per SIGHUP, not once per worker; each worker named on its lines', async (t) => {
  const gw = start(t, { host: '127.0.0.1', workers: 2 });
  const lines = await eventually(async () => gw.listening(), (l) => l.length === 2, 20_000);
  t.equal(lines.length, 2, `both workers listen (output: ${gw.out.stdout}${gw.out.stderr})`);
  t.equal(gw.count(WARNING), 1, 'the line is printed once for the cluster');
  t.strictSame(lines.map((l) => l.worker).sort(), [1, 2], 'each worker\'s listening line names it');
  gw.child.kill('SIGHUP');
  await eventually(async () => gw.json().filter((l) => l.msg === 'configuration reloaded').length, (n) => n === 2, 10_000);
  t.equal(gw.count(WARNING), 2, 'a reload warns once more, once');
  const reloaded = gw.json().filter((l) => l.msg === 'configuration reloaded');
  t.strictSame(reloaded.map((l) => l.worker).sort(), [1, 2], 'each worker\'s reload line names it');
  t.equal(gw.json().find((l) => l.msg === 'starting workers')?.worker, undefined, 'the primary\'s lines name no worker');
  t.equal(gw.out.stderr, '');
  t.equal(await gw.stop(), 0);
});
