// Starts the gateway as a real child process (node app/main.ts) on a free port, stopped when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { eventually } from '../admin/helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Teardown { teardown(fn: () => unknown): void }

export const freePort = () => new Promise<number>((resolve, reject) => {
  const probe = createServer();
  probe.once('error', reject);
  probe.listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as AddressInfo;
    probe.close(() => resolve(port));
  });
});

/**
 * One gateway process on a config file; stopped (SIGTERM, then SIGKILL) when the test ends. The shipped config's
 * embedded store is kept in memory (GATEWAY_STORE_PATH) unless `env` says otherwise; `port` reuses a port (a restart);
 * `prefix` runs it through a command that execs it (the process keeps its pid).
 */
export async function gatewayProcess(t: Teardown, config: string, o: { env?: NodeJS.ProcessEnv; port?: number; prefix?: string[] } = {}): Promise<{ url: string; child: ChildProcess; stdout: () => string }> {
  const port = o.port ?? await freePort();
  const [command, ...args] = [...o.prefix ?? [], process.execPath, 'app/main.ts', '--config', config, '--port', String(port), '--host', '127.0.0.1'];
  const child = spawn(command, args, {
    cwd: ROOT, env: { ...process.env, GATEWAY_STORE_PATH: ':memory:', LOG_LEVEL: 'warn', ...o.env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  t.teardown(() => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => { clearTimeout(kill); resolve(); });
    child.kill('SIGTERM');
  }));
  const url = `http://127.0.0.1:${port}`;
  const ready = await eventually(() => fetch(url + '/readyz').then((r) => r.status, () => 0), (s) => s === 200 || child.exitCode !== null, 15_000);
  if (ready !== 200) throw new Error(`gateway process did not start (exit ${child.exitCode}): ${stderr}`);
  return { url, child, stdout: () => stdout };
}
