// Stage `page`: a static file read once per config load (relative paths from the gateway's directory), with no-store, a strict CSP and no referrer.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import t from 'tap';
import { startGateway } from '../../app/gateway.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-page-'));
writeFileSync(join(dir, 'hello.html'), '<!doctype html><title>hi</title><p>hello</p>');

const config = (file: string) => `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
platforms: { sim: { simulator: true } }
groups: { main: { platform: sim, models: ["*"], accounts: [{ id: s, credential: c }] } }
routes:
  - { method: GET, path: /hello, format: gateway, pipeline: [{ page: { file: ${JSON.stringify(join(dir, file))}, content_type: "text/html; charset=utf-8" } }] }
  - { method: GET, path: /style.css, format: gateway, pipeline: [{ page: { file: web/page.css, content_type: "text/css; charset=utf-8" } }] }
`;

async function start(file: string) {
  const configFile = join(dir, `gateway-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(configFile, config(file));
  return startGateway({ configFile, host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }) });
}

t.test('serves the file with its content type and strict headers', async (t) => {
  const gw = await start('hello.html');
  t.teardown(() => gw.close());
  const res = await fetch(gw.url + '/hello');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.equal(res.headers.get('referrer-policy'), 'no-referrer');
  t.equal(res.headers.get('x-content-type-options'), 'nosniff');
  const csp = res.headers.get('content-security-policy') ?? '';
  t.match(csp, /^default-src 'self';/);
  t.match(csp, /script-src 'self'(;|$)/);
  t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'no inline script, no eval, no wildcard');
  t.match(csp, /frame-ancestors 'none'/);
  t.equal(await res.text(), '<!doctype html><title>hi</title><p>hello</p>');
  const css = await fetch(gw.url + '/style.css');
  t.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  const shipped = readFileSync(fileURLToPath(new URL('../../web/page.css', import.meta.url)), 'utf8');
  t.equal(await css.text(), shipped, 'a relative path is read from the gateway\'s directory, wherever gateway.yaml is');
  const head = await fetch(gw.url + '/hello', { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength('<!doctype html><title>hi</title><p>hello</p>')));
  t.equal(await head.text(), '');
});

t.test('the file is read once, when the config loads (a reload picks up a change)', async (t) => {
  const gw = await start('hello.html');
  t.teardown(() => gw.close());
  writeFileSync(join(dir, 'hello.html'), 'changed');
  t.match(await (await fetch(gw.url + '/hello')).text(), /hello/, 'the edit is not served before a reload');
  t.same(await gw.reload(), []);
  t.equal(await (await fetch(gw.url + '/hello')).text(), 'changed');
});

t.test('a missing file stops the gateway from starting, naming the file', async (t) => {
  // In a child process, as an operator would start it: the half-started simulators die with it.
  const configFile = join(dir, 'gateway-missing.yaml');
  writeFileSync(configFile, config('missing.html'));
  const main = fileURLToPath(new URL('../../app/main.ts', import.meta.url));
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    execFile(process.execPath, [main, '--config', configFile], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err as { code?: number }).code ?? null : 0, out: stdout + stderr });
    });
  });
  t.equal(run.code, 1);
  t.match(run.out, /page: cannot read [^"]*missing\.html/);
});

t.test('optional: a missing file answers 404 and the gateway starts; a present one is served', async (t) => {
  const configFile = join(dir, 'gateway-optional.yaml');
  writeFileSync(configFile, `
server: { host: 127.0.0.1, port: 0 }
platforms: { sim: { simulator: true } }
groups: { main: { platform: sim, models: ["*"], accounts: [{ id: s, credential: c }] } }
routes:
  - { method: GET, path: /lib.js, format: gateway, pipeline: [{ page: { file: ${JSON.stringify(join(dir, 'not-installed.js'))}, content_type: "text/javascript", optional: true } }] }
  - { method: GET, path: /hello, format: gateway, pipeline: [{ page: { file: ${JSON.stringify(join(dir, 'hello.html'))}, content_type: "text/html", optional: true } }] }
`);
  const gw = await startGateway({ configFile, host: '127.0.0.1', port: 0, log: pino({ level: 'silent' }) });
  t.teardown(() => gw.close());
  const missing = await fetch(gw.url + '/lib.js');
  t.equal(missing.status, 404);
  t.match(await missing.json(), { error: { code: 'not_found' } });
  t.equal((await fetch(gw.url + '/hello')).status, 200);
});
