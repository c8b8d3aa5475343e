// app/start.js, the entry of `npm start` and of the image: node's compile cache on for the gateway's main thread, its
// embedded store's writer thread and a cluster's workers. From the second start on (the first fills the cache), no
// thread of the gateway loads node's TypeScript stripper (amaro, ~17 MB resident in each thread that loads it).
// `node app/main.ts`, without the cache, loads it in each thread: the control that shows the probe can tell.
// Each start runs with TMPDIR set to a fresh folder, so the cache lands there (node's default: the system's temp folder).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { demoConfig, writeConfig } from '../helpers/gateway.ts';
import { freePort } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PROBE = fileURLToPath(new URL('../helpers/amaro-probe.js', import.meta.url));

interface ThreadReport { pid: number; thread: number; amaro: boolean; cache: string }

/**
 * Spawns node with `nodeArgs`, then `entry` on `config` (a port of its own, TMPDIR `temp`, `env`), and waits until it
 * answers /readyz (asserted). Its process, what it wrote to stderr so far, and a stop that waits for its exit.
 */
async function startEntry(t: Test, o: { entry: string; config: string; temp: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[] }) {
  const port = await freePort();
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), o.entry, '--config', o.config, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, TMPDIR: o.temp, LOG_LEVEL: 'warn', ...o.env },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited; } });
  const ready = await eventually(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0), (s) => s === 200 || child.exitCode !== null, 20_000);
  t.equal(ready, 200, `${o.entry} started: ${stderr}`);
  return {
    child,
    stderr: () => stderr,
    stop: async () => { child.kill('SIGTERM'); await exited; },
  };
}

/**
 * Starts `entry` on `config` with the probe preloaded, waits until it answers and `threads` threads have reported,
 * stops it; the reports.
 */
async function run(t: Test, o: { entry: string; config: string; temp: string; threads: number; env?: NodeJS.ProcessEnv }): Promise<ThreadReport[]> {
  const started = await startEntry(t, { ...o, env: { AMARO_PROBE_MS: '500', ...o.env }, nodeArgs: ['--import', PROBE] });
  const reports = () => [...started.stderr().matchAll(/^amaro-probe pid=(\d+) thread=(\d+) amaro=(true|false) cache=(.*)$/gm)]
    .map((m) => ({ pid: Number(m[1]), thread: Number(m[2]), amaro: m[3] === 'true', cache: m[4] }));
  const got = await eventually(async () => reports(), (r) => r.length >= o.threads || started.child.exitCode !== null, 10_000);
  await started.stop();
  return got;
}

t.test('one process on the embedded file store: from the second start, neither the main thread nor the writer thread loads the stripper', async (t) => {
  const temp = mkdtempSync(join(tmpdir(), 'gw-start-'));
  t.teardown(() => rmSync(temp, { recursive: true, force: true }));
  const shipped = join(ROOT, 'gateway.yaml');
  const env = { GATEWAY_STORE_PATH: join(temp, 'gateway.db') };
  const cache = join(temp, 'node-compile-cache');

  const first = await run(t, { entry: 'app/start.js', config: shipped, temp, threads: 2, env });
  t.equal(first.length, 2, 'two threads: the main one and the store\'s writer');
  t.ok(existsSync(cache) && readdirSync(cache).length > 0, 'the first start filled the cache in the temp folder');

  const second = await run(t, { entry: 'app/start.js', config: shipped, temp, threads: 2, env });
  t.strictSame(second.map((r) => r.thread).sort(), [0, 1], 'the main thread and the writer thread reported');
  for (const r of second) {
    t.equal(r.amaro, false, `thread ${r.thread}: the stripper is not loaded`);
    t.equal(r.cache, cache, `thread ${r.thread}: its environment names the cache`);
  }

  const control = await run(t, { entry: 'app/main.ts', config: shipped, temp, threads: 2, env });
  t.strictSame(control.map((r) => r.amaro), [true, true], 'node app/main.ts: both threads load it (the probe tells)');
});

t.test('a cluster: the primary and every worker find the cache', async (t) => {
  const temp = mkdtempSync(join(tmpdir(), 'gw-start-'));
  t.teardown(() => rmSync(temp, { recursive: true, force: true }));
  const config = writeConfig(demoConfig().replace('port: 0,', 'port: 0, workers: 2,'));
  await run(t, { entry: 'app/start.js', config, temp, threads: 3 });
  const second = await run(t, { entry: 'app/start.js', config, temp, threads: 3 });
  t.equal(new Set(second.map((r) => r.pid)).size, 3, 'the primary and its two workers reported');
  t.strictSame(second.filter((r) => r.amaro), [], 'none loads the stripper');
  t.ok(second.every((r) => r.cache === join(temp, 'node-compile-cache')), 'each names the cache');
});

/** Starts app/start.js on `config` with `env`, waits until it answers; its pid's environment and command line, then stops it. */
async function started(t: Test, config: string, temp: string, env: NodeJS.ProcessEnv = {}): Promise<{ environ: string[]; cmdline: string[] }> {
  const gateway = await startEntry(t, { entry: 'app/start.js', config, temp, env });
  const read = (what: string) => readFileSync(`/proc/${gateway.child.pid}/${what}`, 'utf8').split('\0').filter(Boolean);
  const out = { environ: read('environ'), cmdline: read('cmdline') };
  await gateway.stop();
  return out;
}

t.test('on Linux: two malloc arenas, set by the process started (the same pid), unless the environment names a value', { skip: process.platform !== 'linux' && 'MALLOC_ARENA_MAX is set only on Linux' }, async (t) => {
  const temp = mkdtempSync(join(tmpdir(), 'gw-start-'));
  t.teardown(() => rmSync(temp, { recursive: true, force: true }));
  const config = writeConfig(demoConfig());
  const shipped = await started(t, config, temp);
  t.ok(shipped.environ.includes('MALLOC_ARENA_MAX=2'), 'the process spawned runs with MALLOC_ARENA_MAX=2 (execve: no child of its own)');
  t.equal(shipped.cmdline[1], join(ROOT, 'app/start.js'), 'running app/start.js');
  t.strictSame(shipped.cmdline.slice(2, 4), ['--config', config], 'with its own arguments');
  const own = await started(t, config, temp, { MALLOC_ARENA_MAX: '4' });
  t.ok(own.environ.includes('MALLOC_ARENA_MAX=4') && !own.environ.includes('MALLOC_ARENA_MAX=2'), 'an operator\'s value is kept');
});
