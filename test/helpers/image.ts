// The image without a Docker engine: a clean checkout of the repository, a copy of the app made from it as the Dockerfile
// makes its image (its ENV, COPY and RUN lines, npm ci from npm's cache), and that copy started as the ENTRYPOINT starts it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { contextFiles, dockerfile, dockerignore, execForm, type Instruction } from './docker.ts';
import { freePort } from './process.ts';

/**
 * The files a clone of `root` would hold once its edits are committed: tracked and new files, as in the working tree,
 * and nothing git ignores (node_modules, data, an older install's web/vendor). Removed when the test ends.
 */
export function cleanCheckout(t: Test, root: string): string {
  const listed = spawnSync('git', ['-C', root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`a clean checkout needs git and a repository at ${root}: ${listed.stderr || listed.error}`);
  const dir = mkdtempSync(join(tmpdir(), 'gw-clone-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    // A file deleted but not yet committed is listed by --cached; a clone after the commit has none.
    const stat = lstatSync(join(root, file), { throwIfNoEntry: false });
    if (!stat) continue;
    mkdirSync(join(dir, file, '..'), { recursive: true });
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(join(root, file)), join(dir, file));
    else cpSync(join(root, file), join(dir, file));
  }
  return dir;
}

/** The Dockerfile of a checkout: its instructions, its build context, and its one instruction of a kind. */
export function dockerBuild(checkout: string) {
  const steps = dockerfile(readFileSync(join(checkout, 'Dockerfile'), 'utf8'));
  const ignored = dockerignore(readFileSync(join(checkout, '.dockerignore'), 'utf8'));
  const one = (op: string) => {
    const found = steps.filter((s) => s.op === op);
    if (found.length !== 1) throw new Error(`expected one ${op}, found ${found.length}`);
    return found[0].args;
  };
  return { steps, ignored, context: new Set(contextFiles(checkout, ignored)), one, workdir: one('WORKDIR') };
}

export interface ImageCopy { dir: string; env: NodeJS.ProcessEnv; steps: Instruction[]; one: (op: string) => string }

/**
 * A copy of the app made as the Dockerfile makes the image from `checkout`: its ENV lines, its COPY lines over the build
 * context, its `npm ci` (from npm's cache, --prefer-offline, bounded in time) and its warm-up start. Asserts each step.
 */
export function buildImage(t: Test, checkout: string): ImageCopy {
  const { steps, context, one, workdir } = dockerBuild(checkout);
  const dir = mkdtempSync(join(tmpdir(), 'gw-image-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  for (const s of steps) {
    if (s.op === 'ENV') {
      const [name, value] = s.args.split('=');
      // A folder of the image lands in the copy.
      env[name] = value.startsWith(`${workdir}/`) ? join(dir, value.slice(workdir.length)) : value;
    } else if (s.op === 'COPY') {
      const [dest, ...sources] = s.args.split(/\s+/).reverse();
      t.notMatch(s.args, /^--/, 'plain COPY from the build context');
      for (const src of sources.reverse()) {
        const files = src === '.' ? [...context] : [src];
        t.strictSame(files.filter((f) => !context.has(f)), [], `COPY ${src}: in the context`);
        for (const f of files) {
          const to = join(dir, dest === './' || dest === '.' ? f : join(dest.replace(workdir, ''), f));
          mkdirSync(join(to, '..'), { recursive: true });
          cpSync(join(checkout, f), to);
        }
      }
    } else if (s.op === 'RUN' && /\bnpm ci\b/.test(s.args)) {
      // The image's exact install (its cache clean left out: the cache is the machine's), from npm's cache where it can.
      const command = s.args.split('&&')[0].trim() + ' --prefer-offline';
      const ran = spawnSync('sh', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
      t.equal(ran.status, 0, `${command}: ${ran.stderr}${ran.error ?? ''}`);
    } else if (s.op === 'RUN' && s.args.includes('app/start.js')) {
      // The compile cache's filling (the chown to the image's user is left out: this copy is the test's own).
      const command = s.args.split('&&')[0].trim().replace(/^node /, `"${process.execPath}" `);
      const ran = spawnSync('sh', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
      t.equal(ran.status, 0, `${command}: ${ran.stderr}`);
    }
  }
  return { dir, env, steps, one };
}

/** The ENTRYPOINT and CMD of the image as a command line for this machine's node (extra node flags first). */
export function entryCommand(image: ImageCopy, nodeFlags: string[] = []): [string, string[]] {
  const [node, ...entry] = execForm(image.one('ENTRYPOINT'))!;
  return [node === 'node' ? process.execPath : node, [...nodeFlags, ...entry, ...execForm(image.one('CMD'))!]];
}

/** The copy started as the image starts (on a free port of 127.0.0.1), ready; killed when the test ends if still running. */
export async function runImage(t: Test, image: ImageCopy, o: { env?: NodeJS.ProcessEnv; nodeFlags?: string[] } = {}) {
  mkdirSync(join(image.dir, 'data'), { recursive: true });
  const env = { ...image.env, PORT: String(await freePort()), GATEWAY_HOST: '127.0.0.1', ...o.env };
  const [command, args] = entryCommand(image, o.nodeFlags);
  const child: ChildProcess = spawn(command, args, { cwd: image.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.teardown(async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; } });
  const url = `http://127.0.0.1:${env.PORT}`;
  const ready = await eventually(() => fetch(url + '/readyz').then((r) => r.status, () => 0), (s) => s === 200 || child.exitCode !== null, 20_000);
  t.equal(ready, 200, `started: ${output}`);
  return { url, env, child, exited, output: () => output };
}
