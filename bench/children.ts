// Child server processes for the benchmark: start them, wait until they serve, never leave one behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<void>;
  /** The last few KB of its stdout and stderr, to explain a failed start. */
  output(): string;
}

const live = new Set<ChildProcess>();
const OUTPUT_TAIL = 4096;

// 'exit' handlers must be synchronous, so SIGKILL is the only option left there.
process.on('exit', () => { for (const proc of live) proc.kill('SIGKILL'); });
const signalExit = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
for (const signal of Object.keys(signalExit) as (keyof typeof signalExit)[]) {
  process.on(signal, () => { process.stderr.write(`\nbench: ${signal}, stopping servers\n`); process.exit(signalExit[signal]); });
}

/**
 * `quiet`: stdout goes to /dev/null (a gateway logging as shipped, without the bench reading its log lines);
 * `stdoutFile`: it goes to that file, as an operator's service manager writes it.
 */
export function startNode(name: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; quiet?: boolean; stdoutFile?: string } = {}): Child {
  const out = options.stdoutFile !== undefined ? openSync(options.stdoutFile, 'a') : options.quiet ? 'ignore' : 'pipe';
  const proc = spawn(process.execPath, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', out, 'pipe'] });
  if (typeof out === 'number') closeSync(out); // the child holds its own copy
  live.add(proc);
  let tail = '';
  const keep = (chunk: Buffer) => { tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL); };
  // Always drain both pipes: a full pipe would stall the server mid-benchmark.
  proc.stdout?.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => { live.delete(proc); resolve(); }));
  proc.once('error', (err) => { tail += `\nspawn error: ${err.message}`; });
  return { name, proc, exited, output: () => tail };
}

function failure(child: Child, why: string): Error {
  const out = child.output().trim();
  return new Error(`${child.name}: ${why}${out ? `\n--- ${child.name} output ---\n${out}` : ''}`);
}

/** Resolves with the first stdout line, which our own servers use to announce their URL. */
export function firstLine(child: Child, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(failure(child, `no URL on stdout within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buf += chunk.toString();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      child.proc.stdout!.off('data', onData);
      resolve(buf.slice(0, nl).trim());
    };
    child.proc.stdout!.on('data', onData);
    child.exited.then(() => { clearTimeout(timer); reject(failure(child, `exited (code ${child.proc.exitCode}) before announcing its URL`)); });
  });
}

/** Polls url until it answers 200; fails early if the child dies. */
export async function waitReady(child: Child, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) throw failure(child, `exited (code ${child.proc.exitCode}) before ${url} was ready`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(100);
  }
  throw failure(child, `${url} not ready within ${timeoutMs} ms (last: ${last})`);
}

export async function stop(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const killed = await Promise.race([child.exited.then(() => true), sleep(3000).then(() => false)]);
  if (!killed) {
    child.proc.kill('SIGKILL');
    await child.exited;
  }
}

/** A loopback port that was free a moment ago; the tiny race is acceptable for a local benchmark. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
