// The README's first steps as a new user takes them: `npm start` (its script from package.json, on the shipped
// gateway.yaml) and then every curl of the README, run by the shell with curl itself, each answering 200 with a real answer.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { eventually } from '../admin/helpers.ts';
import { freePort } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Every curl command of the README's sh blocks, continuation lines joined. */
const curls = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1].replace(/\\\n\s*/g, '').split('\n'))
  .map((l) => l.trim())
  .filter((l) => l.startsWith('curl '));

t.test('npm start serves the shipped gateway.yaml, and every curl of the README answers', async (t) => {
  t.ok(curls.length >= 8, `${curls.length} curls in the README`);
  t.ok(readme.includes('npm install && npm start'), 'the README\'s set-up command');

  const start = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const [node, ...args] = start.split(' ');
  t.equal(node, 'node', `npm start runs node: ${start}`);
  const port = await freePort();
  const child = spawn(process.execPath, [...args, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'],
    // The shipped file keeps its store in ./data; the test's is in memory, so it leaves nothing behind.
    env: { PATH: process.env.PATH, TMPDIR: process.env.TMPDIR, GATEWAY_STORE_PATH: ':memory:', LOG_LEVEL: 'warn' },
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGTERM'); await exited; } });
  const base = `http://127.0.0.1:${port}`;
  const ready = await eventually(() => fetch(base + '/readyz').then((r) => r.status, () => 0), (s) => s === 200 || child.exitCode !== null, 20_000);
  t.equal(ready, 200, `npm start's command answers: ${stderr}`);

  for (const curl of curls) {
    t.test(curl.slice(0, 110), async (t) => {
      t.match(curl, /localhost:8080/, 'names the address npm start serves');
      const command = `${curl.replace(/localhost:8080/g, `127.0.0.1:${port}`)} -w '\\n%{http_code}'`;
      const { stdout } = await run('bash', ['-c', command], { cwd: ROOT, timeout: 20_000 });
      const cut = stdout.lastIndexOf('\n');
      const [body, status] = [stdout.slice(0, cut), stdout.slice(cut + 1)];
      t.equal(status, '200', body.slice(0, 300));
      if (curl.includes('"stream":true')) {
        t.match(body, /^data: \{/m, 'server-sent events');
        t.match(body, /"usage":\{/, 'with the usage it asked for');
        t.match(body, /^data: \[DONE\]$/m, 'to the end');
        return;
      }
      const json = JSON.parse(body) as Record<string, unknown>;
      t.equal(json.error ?? null, null, 'no error');
      if (curl.includes('/v1/models')) t.ok((json.data as unknown[]).length > 0, 'a model list');
      else if (curl.includes('/v1/usage')) t.match(json, { isValid: true, status: 'active', usage: { total: { requests: Number } } }, 'the key\'s status and usage');
      else t.match(body, /Hello there/, 'the simulator echoes the prompt back');
    });
  }
});
