// The shipped gateway.yaml: its pages load, and with GATEWAY_ADMIN_TOKEN set an issued key works on the demo routes at once.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import t from 'tap';
import { startGateway } from '../../app/gateway.ts';
import { testEnv } from '../helpers/gateway.ts';
import { admin, chat, eventually } from './helpers.ts';

const configFile = fileURLToPath(new URL('../../gateway.yaml', import.meta.url));
const start = async (env: NodeJS.ProcessEnv) => {
  const gw = await startGateway({ configFile, host: '127.0.0.1', port: 0, env: testEnv(env), log: pino({ level: 'silent' }) });
  t.teardown(() => gw.close());
  return gw;
};

t.test('pages and their assets are served with their types', async (t) => {
  const gw = await start({});
  for (const [path, type, marker] of [
    ['/key-usage', 'text/html', /<input id="key"[^>]*type="password"[^>]*autocomplete="off"/],
    ['/console', 'text/html', /<input id="token"[^>]*type="password"/],
    ['/assets/page.css', 'text/css', /\.badge/],
    ['/assets/dom.js', 'text/javascript', /export function el/],
    ['/assets/key-usage.js', 'text/javascript', /\/v1\/usage/],
    ['/assets/console.js', 'text/javascript', /data-tab/],
    ['/assets/console-api.js', 'text/javascript', /authorization: `Bearer/],
    ['/assets/console-overview.js', 'text/javascript', /\/admin\/usage\/summary/],
    ['/assets/console-keys.js', 'text/javascript', /\/admin\/keys/],
    ['/assets/console-records.js', 'text/javascript', /\/admin\/usage\?/],
    ['/assets/console-accounts.js', 'text/javascript', /\/admin\/accounts/],
    ['/assets/chart.js', 'text/javascript', /uPlot/],
  ] as const) {
    const res = await fetch(gw.url + path);
    t.equal(res.status, 200, path);
    t.match(res.headers.get('content-type'), type, path);
    t.equal(res.headers.get('cache-control'), 'no-store', path);
    t.match(await res.text(), marker, path);
  }
  for (const page of ['/key-usage', '/console']) {
    t.notMatch(await (await fetch(gw.url + page)).text(), /<script>|<script(?![^>]*\ssrc=)|\son\w+=/, `${page}: no inline script or handler`);
  }
  // The chart library, straight from its npm package: whatever installed the dependencies, scripts run or not.
  for (const [path, type, file] of [['/assets/uplot.js', 'text/javascript', 'uPlot.iife.min.js'], ['/assets/uplot.css', 'text/css', 'uPlot.min.css']]) {
    const res = await fetch(gw.url + path);
    t.equal(res.status, 200, path);
    t.match(res.headers.get('content-type'), type, path);
    t.equal(await res.text(), readFileSync(fileURLToPath(new URL(`../../node_modules/uplot/dist/${file}`, import.meta.url)), 'utf8'), `${path} is the package's ${file}`);
  }
});

t.test('no admin token in the environment: the admin API is disabled', async (t) => {
  const gw = await start({});
  const res = await admin(gw, 'GET', '/admin/keys', undefined, '');
  t.equal(res.status, 503);
  t.equal(res.body.error.code, 'ADMIN_API_DISABLED');
});

t.test('with GATEWAY_ADMIN_TOKEN: issue a demo key, use it at once, revoke it', async (t) => {
  const token = 'shipped-admin-token-0123456789abcdef';
  const gw = await start({ GATEWAY_ADMIN_TOKEN: token });
  const made = await admin(gw, 'POST', '/admin/keys', { group: 'demo', pools: ['demo-antigravity'] }, token);
  t.equal(made.status, 201);
  t.equal(await chat(gw, made.body.key), 200, 'the demo chat route serves the new key');
  const id = made.body.record.id;
  const records = await eventually(() => admin(gw, 'GET', `/admin/usage?key=${id}`, undefined, token), (r) => r.body.records.length > 0);
  t.match(records.body.records, [{ key_id: id, group: 'demo', model: 'gpt-4o-mini', status: 200 }], 'the demo relay meters it');
  const listed = await admin(gw, 'GET', '/admin/keys', undefined, token);
  t.ok(listed.body.keys.some((k: { id: string; source: string }) => k.id === 'demo' && k.source === 'config'), 'the demo key is listed as a config key');
  t.equal((await admin(gw, 'PATCH', `/admin/keys/${id}`, { disabled: true }, token)).status, 200);
  t.equal(await chat(gw, made.body.key), 401);
  t.equal((await admin(gw, 'GET', '/admin/keys', undefined, 'sk-demo-key')).body.error.code, 'MODEL_KEY_REFUSED');
});
