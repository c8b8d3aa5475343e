// The Dockerfile and .dockerignore without a Docker engine: the image's entry, user, health check and data volume are
// read from the Dockerfile; every file the gateway loads at run time is in the build context; no runtime import reaches
// a devDependency; and a copy of a clean checkout made as the Dockerfile makes it (its COPY lines over the context, its
// `npm ci --omit=dev --ignore-scripts`, from npm's cache) serves every page file, starts, passes its own HEALTHCHECK, relays a request, answers `npm run keys`,
// checks its config quietly and drains on SIGTERM.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { eventually } from '../admin/helpers.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { execForm, filesBeside, importGraph, pageFiles } from '../helpers/docker.ts';
import { buildImage, cleanCheckout, dockerBuild, entryCommand, runImage } from '../helpers/image.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const AMARO_PROBE = fileURLToPath(new URL('../helpers/amaro-probe.js', import.meta.url));
// npm ci (from the cache) and the copy's start on a shared machine.
t.setTimeout(180_000);
// What a clone holds: an ignored file the working tree happens to have (an older install's web/vendor/) proves nothing.
const CHECKOUT = cleanCheckout(t, ROOT);
const read = (file: string) => readFileSync(join(CHECKOUT, file), 'utf8');
const { steps, ignored, context, one, workdir: WORKDIR } = dockerBuild(CHECKOUT);
const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; scripts: Record<string, string> };
const ENTRIES = ['app/start.js', 'scripts/keys.ts'];
const graph = importGraph(CHECKOUT, ENTRIES);
/** A served file inside an installed package (node_modules/NAME/...): npm ci puts it in the image, not COPY. */
const fromPackage = (file: string) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];

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
  const shippedPages = pageFiles(read('app/defaults.yaml'), CHECKOUT);
  t.ok(shippedPages.includes('README.md'), 'the docs pages serve the README');
  t.ok(['docs/operate.md', 'docs/configuration.md', 'docs/architecture.md'].every((f) => shippedPages.includes(f)), 'and the pages of docs/');
  const packaged = shippedPages.filter(fromPackage);
  t.ok(packaged.length > 0, `files served from packages: ${packaged.join(', ')}`);
  t.strictSame(packaged.filter((f) => !(fromPackage(f)! in pkg.dependencies)), [], 'each from a production dependency (npm ci --omit=dev installs it)');
  const needed = ['package.json', 'package-lock.json', 'gateway.yaml', 'app/defaults.yaml', ...graph.files, ...shippedPages.filter((f) => !fromPackage(f)), ...filesBeside(CHECKOUT, graph.files)];
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

t.test('a copy made as the Dockerfile makes it from a clean checkout runs with production dependencies only', async (t) => {
  const image = buildImage(t, CHECKOUT);
  t.ok(image.env.NODE_COMPILE_CACHE && existsSync(image.env.NODE_COMPILE_CACHE), 'the compile cache is filled at build');
  for (const dev of Object.keys(pkg.devDependencies)) t.notOk(existsSync(join(image.dir, 'node_modules', dev)), `${dev} is not installed`);
  t.ok(existsSync(join(image.dir, 'node_modules', 'pino')), 'the dependencies are');
  t.strictSame(pageFiles(read('app/defaults.yaml'), CHECKOUT).filter((f) => !existsSync(join(image.dir, f))), [], 'every file a page route serves is in the image');

  const admin = { GATEWAY_ADMIN_TOKEN: 'image-admin-token-0123456789abcdef' };
  const [node, args] = entryCommand(image);
  const checked = spawnSync(node, [...args, '--check'], { cwd: image.dir, env: { ...image.env, ...admin }, encoding: 'utf8', timeout: 30_000 });
  t.equal(checked.status, 0, `--check: ${checked.stderr}`);
  t.equal(checked.stdout, '', '--check prints nothing of a good file');
  t.equal(checked.stderr, '', 'nor warnings: the vendor accounts wait for their variables (a start-up line, not a warning)');

  // The probe reports whether the process loaded node's TypeScript stripper: with the cache filled at build, not even
  // on its first start.
  const run = await runImage(t, image, { env: { ...admin, AMARO_PROBE_MS: '500' }, nodeFlags: ['--import', AMARO_PROBE] });

  const health = execForm(one('HEALTHCHECK').replace(/^.*?\bCMD\s+/, ''))!;
  const probe = spawnSync(health[0] === 'node' ? process.execPath : health[0], health.slice(1), { cwd: image.dir, env: run.env, encoding: 'utf8', timeout: 10_000 });
  t.equal(probe.status, 0, `the HEALTHCHECK command passes: ${probe.stderr}`);

  const report = await eventually(async () => /amaro-probe pid=\d+ thread=0 amaro=(\w+)/.exec(run.output())?.[1], (r) => r !== undefined, 10_000);
  t.equal(report, 'false', 'the first start finds the cache made at build: the stripper is not loaded');

  const chat = await post(run.url + '/v1/chat/completions', chatBody(), bearer('sk-demo-key'));
  t.equal(chat.status, 200, 'a request is relayed (the demo platform: the built-in simulator)');
  t.match(await chat.text(), /"choices"/);

  const keys = spawnSync(process.execPath, ['scripts/keys.ts', 'list', '--url', run.url], { cwd: image.dir, env: run.env, encoding: 'utf8', timeout: 30_000 });
  t.equal(keys.status, 0, `npm run keys works in the image: ${keys.stderr}`);
  t.match(keys.stdout, /demo/);

  run.child.kill('SIGTERM');
  t.equal(await run.exited, 0, 'SIGTERM: drained, exit 0');
});
