// The gateway process on the default store (data/gateway.db beside the config file), restarted twice: once drained by
// SIGTERM, once killed with kill -9. The issued key keeps working, and what it spent (quota used, /v1/usage totals,
// /admin/usage records, a quota reached) is remembered across both.
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import t from 'tap';
import { FLUSH_MS } from '../../core/store/file/store.ts';
import { adminConfig, admin, chat, eventually, issue } from '../admin/helpers.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { freePort, gatewayProcess } from '../helpers/process.ts';

// Three gateway processes start one after another: more than the usual minute on a busy machine.
t.setTimeout(180_000);

// The shipped default, relative to the config file's folder.
const config = writeConfig(adminConfig({ store: 'store: { path: ./data/gateway.db }' }));
const port = await freePort();
const start = () => gatewayProcess(t, config, { port, env: { LOG_LEVEL: 'info' } });

/** Everything the key's holder and the operator can read about the key's spend. */
async function spend(url: string, key: string, id: string) {
  const usage = await (await fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json();
  const records = (await admin(url, 'GET', `/admin/usage?key=${id}&limit=100`)).body.records as { request_id: string; cost: number }[];
  const keys = (await admin(url, 'GET', '/admin/keys')).body.keys as { id: string }[];
  return {
    keys: keys.map((k) => k.id).sort(),
    quota: usage.quota,
    total: usage.usage.total,
    today: usage.usage.today,
    records: records.map((r) => `${r.request_id}:${r.cost}`).sort(),
  };
}

const figures = (s: Awaited<ReturnType<typeof spend>>) =>
  `${s.keys.length} keys, ${s.total.requests} requests, ${s.total.input_tokens}+${s.total.output_tokens} tokens, cost ${s.total.cost} USD, quota used ${s.quota.used}/${s.quota.limit}, ${s.records.length} records`;

/**
 * The process's stdout once it holds a line matching `line`: /readyz can answer before the parent has read the start-up
 * lines from the pipe (two descriptors, no order between them; seen once in CI).
 */
const logged = (gw: { stdout: () => string }, line: RegExp) => eventually(async () => gw.stdout(), (out) => line.test(out), 5000);

/** Waits until the key's requests are settled (the record follows the response by a moment). */
const settled = (url: string, key: string, id: string, n: number) =>
  eventually(() => spend(url, key, id), (s) => s.records.length === n && s.total.requests === n);

t.test('the issued key and its spend survive a SIGTERM restart and a kill -9', async (t) => {
  let gw = await start();
  t.match(await logged(gw, /"msg":"store: file /), new RegExp(`"store":"file","path":"${join(dirname(config), 'data', 'gateway.db')}".*"msg":"store: file `), 'start-up says which store and where');
  const { key, record } = await issue(gw.url, { group: 'main', name: 'restart', limits: { quota_usd: 100 } });
  for (let i = 0; i < 3; i++) t.equal(await chat(gw.url, key), 200);
  const first = await settled(gw.url, key, record.id, 3);
  t.ok(first.total.cost > 0 && first.quota.used === first.total.cost, `spent before the restart: ${figures(first)}`);

  // 1. SIGTERM: the gateway drains, writes its last batch and exits.
  gw.child.kill('SIGTERM');
  t.equal((await once(gw.child, 'exit'))[0], 0, 'SIGTERM: exit 0');
  t.ok(existsSync(join(dirname(config), 'data', 'gateway.db')), 'the file is beside the config');
  gw = await start();
  t.match(await logged(gw, /"msg":"store: file /), /"store":"file".*"keys":1,"records":3/, 'loaded one issued key and three records');
  const afterTerm = await spend(gw.url, key, record.id);
  t.strictSame(afterTerm, first, `after SIGTERM and a restart: ${figures(afterTerm)}`);

  // 2. More spend, the quota set to exactly what was spent (refused from now on), then kill -9 after one flush.
  for (let i = 0; i < 2; i++) t.equal(await chat(gw.url, key), 200, 'the key works after the restart');
  const spent = (await settled(gw.url, key, record.id, 5)).quota.used;
  t.equal((await admin(gw.url, 'PATCH', `/admin/keys/${record.id}`, { limits: { quota_usd: spent } })).status, 200);
  const refusal = await (await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'more' }] }),
  })).json();
  t.equal(refusal.error.code, 'API_KEY_QUOTA_EXHAUSTED');
  const second = await spend(gw.url, key, record.id);
  await new Promise((r) => setTimeout(r, FLUSH_MS + 500));
  gw.child.kill('SIGKILL');
  t.equal((await once(gw.child, 'exit'))[1], 'SIGKILL');
  gw = await start();
  const afterKill = await spend(gw.url, key, record.id);
  t.strictSame(afterKill, second, `after kill -9 and a restart: ${figures(afterKill)}`);
  t.equal(afterKill.quota.remaining, 0, 'the quota is still used up');
  t.equal(await chat(gw.url, key), 429, 'and the key is still refused for it');
  t.equal((await admin(gw.url, 'PATCH', `/admin/keys/${record.id}`, { limits: { quota_usd: 100 } })).status, 200);
  t.equal(await chat(gw.url, key), 200, 'a raised quota serves it again');
  t.comment(`before SIGTERM: ${figures(first)}`);
  t.comment(`after SIGTERM restart: ${figures(afterTerm)}`);
  t.comment(`before kill -9: ${figures(second)}`);
  t.comment(`after kill -9 restart: ${figures(afterKill)}`);
});
