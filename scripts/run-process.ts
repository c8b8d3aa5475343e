// A child process run to its end for the scripts that drive the vendor CLIs: its output (stdout and stderr together, and
// stdout alone), its exit code, and a kill when it outlasts its time.
import { spawn } from 'node:child_process';

export function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number | null; out: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => { out += c; stdout += c; });
    child.stderr.on('data', (c: Buffer) => { out += c; });
    const timer = setTimeout(() => { out += `\n[timed out after ${opts.timeoutMs} ms]`; child.kill('SIGKILL'); }, opts.timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, stdout }); });
    child.on('error', (err) => { clearTimeout(timer); resolve({ code: -1, out: String(err), stdout: '' }); });
  });
}
