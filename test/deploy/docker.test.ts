// The Dockerfile and .dockerignore without a Docker engine: the image's entry, user, health check and data volume are
// read from the Dockerfile; every file the gateway loads at run time is in the build context; no runtime import reaches
// a devDependency; and a copy of the repository made as the Dockerfile makes it (its COPY lines over the context, its
// `npm ci --omit=dev`, from npm's cache) starts, passes its own HEALTHCHECK, relays a request, answers `npm run keys`,
// checks its config quietly and drains on SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { eventually } from '../admin/helpers.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { contextFiles, dockerfile, dockerignore, execForm, filesBeside, importGraph, pageFiles } from '../helpers/docker.ts';
import { freePort } from '../helpers/process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const AMARO_PROBE = fileURLToPath(new URL('../helpers/amaro-probe.js', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const steps = dockerfile(read('Dockerfile'));
const ignored = dockerignore(read('.dockerignore'));
const context = new Set(contextFiles(ROOT, ignored));
const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; scripts: Record<string, string> };
const ENTRIES = ['app/start.js', 'scripts/keys.ts'];
const graph = importGraph(ROOT, ENTRIES);

const one = (op: string) => {
  const found = steps.filter((s) => s.op === op);
  if (found.length !== 1) throw new Error(`expected one ${op}, found ${found.length}`);
  return found[0].args;
};
const WORKDIR = one('WORKDIR');

t.test('the Dockerfile: Node 24 slim, npm ci --omit=dev, a non-root user, node app/start.js, /healthz, the data volume', async (t) => {
  t.match(one('FROM'), /^node:24(\.\d+)*-(\w+-)?slim$/);
  const install = steps.find((s) => s.op === 'RUN' && /\bnpm ci\b/.test(s.args));
  t.match(install?.args, /npm ci --omit=dev\b/, 'production dependencies only');
  const user = steps.findIndex((s) => s.op === 'USER');
  t.ok(user > 0, 'a USER is set');
  t.notMatch(steps[user].args, /^(root|0)(:|$)/, `not root: ${steps[user].args}`);
  t.notOk(steps.slice(user).some((s) => s.op === 'USER' && /^(root|0)(:|$)/.test(s.args)), 'and not switched back');
  const start = pkg.scripts.start.split(/\s+/);
  t.strictSame(execForm(one('ENTRYPOINT')), start, 'node itself as PID 1 (exec form): SIGTERM reaches the gateway; the node flags of npm start');
  t.equal(start.at(-1), 'app/start.js');
  const warm = steps.find((s) => s.op === 'RUN' && s.args.includes('app/start.js'));
  t.match(warm?.args, new RegExp(`^${start.join(' ')} --check --config gateway\\.yaml`), 'the compile cache is filled with the flags of the entry');
  t.ok(steps.some((s) => s.op === 'ENV' && /^NODE_COMPILE_CACHE=\//.test(s.args)), 'in a folder of the image (not /tmp, which a volume may hide)');
  t.strictSame(execForm(one('CMD')), ['--config', 'gateway.yaml']);
  const health = one('HEALTHCHECK');
  t.match(health, /\bCMD\s+\[/, 'the health check runs without a shell');
  t.match(health, /\/healthz/);
  const volumes = execForm(one('VOLUME'))!;
  t.strictSame(volumes, [`${WORKDIR}/data`], 'the data folder (store.path ./data/gateway.db) is the volume');
  t.ok(steps.some((s) => s.op === 'RUN' && s.args.includes(`mkdir -p ${WORKDIR}/data`) && s.args.includes(`chown node:node ${WORKDIR}/data`)),
    'the volume folder belongs to the user that writes it');
  const shipped = parse(read('gateway.yaml')) as { server: { port: string } };
  t.equal(one('EXPOSE'), /\$\{PORT:-(\d+)\}/.exec(String(shipped.server.port))![1], 'EXPOSE is the shipped config\'s default port');
});

t.test('.dockerignore keeps every file the gateway loads, and leaves out tests, data and secrets', async (t) => {
  const shippedPages = pageFiles(read('gateway.yaml'));
  t.ok(shippedPages.includes('README.md'), 'the docs page serves the README');
  const needed = ['package.json', 'package-lock.json', 'gateway.yaml', ...graph.files, ...shippedPages, ...filesBeside(ROOT, graph.files)];
  t.ok(graph.files.size > 50, `${graph.files.size} modules reached from ${ENTRIES.join(' and ')}`);
  t.ok(needed.some((f) => f.endsWith('.lua')), 'the store\'s Lua scripts are among them');
  t.strictSame(needed.filter((f) => !context.has(f)), [], 'none is left out of the build context');
  for (const left of ['test/core/logs.test.ts', 'node_modules/pino/package.json', '.git/HEAD', 'data/gateway.db', '.env', 'deploy/compose.yaml', 'bench/run.ts', 'x/y.log']) {
    t.ok(ignored(left), `${left} is left out`);
  }
});

t.test('no runtime import reaches a devDependency', async (t) => {
  const dev = [...graph.packages].filter((p) => p in pkg.devDependencies);
  t.strictSame(dev, [], 'no devDependency');
  t.strictSame([...graph.packages].filter((p) => !(p in pkg.dependencies)), [], 'every package imported is a dependency');
  t.ok(graph.packages.has('pino') && graph.packages.has('ioredis'), `packages: ${[...graph.packages].join(', ')}`);
});

t.test('a copy made as the Dockerfile makes it runs with production dependencies only', async (t) => {
  const image = mkdtempSync(join(tmpdir(), 'gw-image-'));
  t.teardown(() => rmSync(image, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  for (const s of steps) {
    if (s.op === 'ENV') {
      const [name, value] = s.args.split('=');
      // A folder of the image lands in the copy.
      env[name] = value.startsWith(`${WORKDIR}/`) ? join(image, value.slice(WORKDIR.length)) : value;
    } else if (s.op === 'COPY') {
      const [dest, ...sources] = s.args.split(/\s+/).reverse();
      t.notMatch(s.args, /^--/, 'plain COPY from the build context');
      for (const src of sources.reverse()) {
        const files = src === '.' ? [...context] : [src];
        t.strictSame(files.filter((f) => !context.has(f)), [], `COPY ${src}: in the context`);
        for (const f of files) {
          const to = join(image, dest === './' || dest === '.' ? f : join(dest.replace(WORKDIR, ''), f));
          mkdirSync(join(to, '..'), { recursive: true });
          cpSync(join(ROOT, f), to);
        }
      }
    } else if (s.op === 'RUN' && /\bnpm ci\b/.test(s.args)) {
      // The image's exact install, from npm's cache (tests reach no server they did not start; CI's npm ci fills it).
      const command = s.args.split('&&')[0].trim() + ' --offline';
      const ran = spawnSync('sh', ['-c', command], { cwd: image, env, encoding: 'utf8', timeout: 120_000 });
      t.equal(ran.status, 0, `${command}: ${ran.stderr}`);
    } else if (s.op === 'RUN' && s.args.includes('app/start.js')) {
      // The compile cache's filling (the chown to the image's user is left out: this copy is the test's own).
      const command = s.args.split('&&')[0].trim().replace(/^node /, `"${process.execPath}" `);
      const ran = spawnSync('sh', ['-c', command], { cwd: image, env, encoding: 'utf8', timeout: 60_000 });
      t.equal(ran.status, 0, `${command}: ${ran.stderr}`);
    }
  }
  t.ok(env.NODE_COMPILE_CACHE && existsSync(env.NODE_COMPILE_CACHE), 'the compile cache is filled at build');
  mkdirSync(join(image, 'data'));
  for (const dev of Object.keys(pkg.devDependencies)) t.notOk(existsSync(join(image, 'node_modules', dev)), `${dev} is not installed`);
  t.ok(existsSync(join(image, 'node_modules', 'pino')), 'the dependencies are');

  const [node, ...entry] = execForm(one('ENTRYPOINT'))!;
  const cmd = execForm(one('CMD'))!;
  const run = { ...env, PORT: String(await freePort()), GATEWAY_HOST: '127.0.0.1', GATEWAY_ADMIN_TOKEN: 'image-admin-token-0123456789abcdef' };
  const nodeBin = node === 'node' ? process.execPath : node;

  const checked = spawnSync(nodeBin, [...entry, ...cmd, '--check'], { cwd: image, env: run, encoding: 'utf8', timeout: 30_000 });
  t.equal(checked.status, 0, `--check: ${checked.stderr}`);
  t.equal(checked.stdout, '', '--check prints nothing of a good file');
  t.match(checked.stderr, /^(warning: [^\n]+\n)+$/, 'but its warnings (vendor accounts without credentials)');

  // The probe reports whether the process loaded node's TypeScript stripper: with the cache filled at build, not even
  // on its first start.
  const child = spawn(nodeBin, ['--import', AMARO_PROBE, ...entry, ...cmd], { cwd: image, env: { ...run, AMARO_PROBE_MS: '500' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited; } });
  const url = `http://127.0.0.1:${run.PORT}`;
  const ready = await eventually(() => fetch(url + '/readyz').then((r) => r.status, () => 0), (s) => s === 200 || child.exitCode !== null, 20_000);
  t.equal(ready, 200, `started: ${output}`);

  const health = execForm(one('HEALTHCHECK').replace(/^.*?\bCMD\s+/, ''))!;
  const probe = spawnSync(health[0] === 'node' ? process.execPath : health[0], health.slice(1), { cwd: image, env: run, encoding: 'utf8', timeout: 10_000 });
  t.equal(probe.status, 0, `the HEALTHCHECK command passes: ${probe.stderr}`);

  const report = await eventually(async () => /amaro-probe pid=\d+ thread=0 amaro=(\w+)/.exec(output)?.[1], (r) => r !== undefined, 10_000);
  t.equal(report, 'false', 'the first start finds the cache made at build: the stripper is not loaded');

  const chat = await post(url + '/v1/chat/completions', chatBody(), bearer('sk-demo-key'));
  t.equal(chat.status, 200, 'a request is relayed (the demo platform: the built-in simulator)');
  t.match(await chat.text(), /"choices"/);

  const keys = spawnSync(process.execPath, ['scripts/keys.ts', 'list', '--url', url], { cwd: image, env: run, encoding: 'utf8', timeout: 30_000 });
  t.equal(keys.status, 0, `npm run keys works in the image: ${keys.stderr}`);
  t.match(keys.stdout, /demo/);

  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM: drained, exit 0');
});
