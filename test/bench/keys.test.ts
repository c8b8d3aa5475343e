// The bench's --keys N (bench/targets.ts withKeys, bench/load.ts, bench/wrk.ts): the gateway configs get N keys of the
// load key's group and limits, loaded by the gateway's own config loader; the load cycles through them, every answer
// still checked, against a loopback stub that counts requests by key.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import t from 'tap';
import { defaults, parts } from '../../app/registry.ts';
import { parseConfig } from '../../core/config.ts';
import { fire } from '../../bench/load.ts';
import { whole } from '../../bench/options.ts';
import { withKeys } from '../../bench/targets.ts';
import { measureWrk, wrkInstalled } from '../../bench/wrk.ts';

const BENCH = join(import.meta.dirname, '../../bench');
const ENV = { BENCH_UPSTREAM_URL: 'http://127.0.0.1:9', BENCH_STORE_PATH: ':memory:' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const check = '{"object":"chat.completion","choices":[{"message":{"content":"hello there"}}]}';

t.test('--keys: a whole number from 1 to 64', async (t) => {
  t.equal(whole('1', 'keys', 1, 64), 1);
  t.equal(whole('64', 'keys', 1, 64), 64);
  t.throws(() => whole('0', 'keys', 1, 64), /--keys must be a number from 1 to 64/);
  t.throws(() => whole('65', 'keys', 1, 64), /from 1 to 64/);
  t.throws(() => whole('2.5', 'keys', 1, 64), /--keys must be a whole number/);
  t.throws(() => whole('eight', 'keys', 1, 64), /--keys/);
});

for (const file of ['gateway.bench.yaml', 'gateway.operator.yaml']) {
  t.test(`withKeys: ${file} with 8 keys loads with 8 keys of the load key's group and limits`, async (t) => {
    const text = readFileSync(join(BENCH, file), 'utf8');
    const original = parseConfig(text, join(BENCH, file), { ...parts, defaults, env: ENV }).config;
    const spread = withKeys(text, 8);
    const { config } = parseConfig(spread.text, join(BENCH, file), { ...parts, defaults, env: ENV });
    const load = original.keys.find((k) => k.id === 'bench')!;
    t.equal(load.sha256, sha256('sk-bench-0123456789'), 'the load key is the one request.ts sends by default');
    t.same(spread.ids, ['bench', ...[2, 3, 4, 5, 6, 7, 8].map((i) => `bench-${i}`)]);
    t.same(spread.keys, ['sk-bench-0123456789', ...[2, 3, 4, 5, 6, 7, 8].map((i) => `sk-bench-0123456789-${i}`)]);
    t.equal(spread.group, load.group);
    const spreadKeys = config.keys.filter((k) => spread.ids.includes(k.id));
    t.equal(spreadKeys.length, 8, 'the gateway loads all eight');
    for (const [i, id] of spread.ids.entries()) {
      const k = config.keys.find((c) => c.id === id)!;
      t.equal(k.sha256, sha256(spread.keys[i]), `${id}: its secret`);
      t.equal(k.group, load.group, `${id}: the load key's group`);
      t.same(k.limits, load.limits, `${id}: the load key's limits`);
    }
    t.equal(new Set(config.keys.map((k) => k.sha256)).size, config.keys.length, 'no secret twice');
    t.same(config.keys.filter((k) => !spread.ids.includes(k.id)), original.keys.filter((k) => k.id !== 'bench'), 'the other keys (d\'s) as they were');
    t.same(config.groups, original.groups, 'groups unchanged');
    t.same(config.routes.length, original.routes.length, 'routes unchanged');
    t.match(spread.text, /\$\{BENCH_UPSTREAM_URL\}/, 'variables left for the gateway to fill');
  });
}

t.test('withKeys: 1 key is the config\'s own; a config without the load key is refused', async (t) => {
  const text = readFileSync(join(BENCH, 'gateway.bench.yaml'), 'utf8');
  const one = withKeys(text, 1);
  t.same(one.keys, ['sk-bench-0123456789']);
  t.same(one.ids, ['bench']);
  t.throws(() => withKeys('keys:\n  - { id: other, key: x, group: g }\n', 2), /no key with id bench/);
  t.throws(() => withKeys('groups: {}\n', 2), /no keys list/);
});

/** A stub that counts requests by bearer key, answering `short` keys with a cut body and `refused` ones with 401. */
async function stub(t: { teardown(fn: () => void): void }, o: { short?: string; refused?: string } = {}) {
  const byKey = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = String(req.headers.authorization).replace(/^Bearer /, '');
    byKey.set(key, (byKey.get(key) ?? 0) + 1);
    req.resume().on('end', () => {
      if (key === o.refused) return res.writeHead(401).end('{"error":{}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(key === o.short ? check.slice(0, 20) + check.slice(-32) : check);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.close(); });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, byKey };
}

const KEYS = ['sk-bench-0123456789', 'sk-bench-0123456789-2', 'sk-bench-0123456789-3', 'sk-bench-0123456789-4'];

t.test('autocannon: each connection cycles through the keys; every answer checked', async (t) => {
  const { url, byKey } = await stub(t, { short: KEYS[2] });
  let ok = 0;
  let short = 0;
  const connections = 3;
  const { run } = fire(url, { connections, duration: 1, stream: false }, { keys: KEYS, check }, (status, isWhole) => {
    if (status === 200 && isWhole) ok++;
    else short++;
  });
  const result = await run;
  const counts = KEYS.map((k) => byKey.get(k) ?? 0);
  t.same([...byKey.keys()].sort(), [...KEYS].sort(), 'no other key sent');
  t.ok(Math.min(...counts) > 50, `every key loaded: ${counts.join(' ')}`);
  t.ok(Math.max(...counts) - Math.min(...counts) <= connections, `in turn, each connection a request of each: ${counts.join(' ')}`);
  t.equal(ok + short, result['2xx'], 'every answer heard');
  t.ok(Math.abs(short - counts[2]) <= connections, `the short ones are the third key's: ${short} of ${counts[2]}`);
});

t.test('autocannon: without keys, the one key as before', async (t) => {
  const { url, byKey } = await stub(t);
  await fire(url, { connections: 1, duration: 1, stream: false }, { key: KEYS[1], check }, () => {}).run;
  t.same([...byKey.keys()], [KEYS[1]]);
});

t.test('wrk: request() cycles through the keys; every answer checked', { skip: wrkInstalled() ? false : 'wrk is not installed (Debian: apt-get install wrk)' }, async (t) => {
  const { url, byKey } = await stub(t, { refused: KEYS[1], short: KEYS[3] });
  const f = await measureWrk(url, { connections: 2, duration: 1, warmup: 0, stream: false }, { keys: KEYS, check }, undefined, createHistogram());
  const counts = KEYS.map((k) => byKey.get(k) ?? 0);
  t.same([...byKey.keys()].sort(), [...KEYS].sort(), 'no other key sent');
  t.ok(Math.min(...counts) > 50, `every key loaded: ${counts.join(' ')}`);
  // One Lua state hands the keys out in turn over both connections: equal shares, give or take the last turn.
  t.ok(Math.max(...counts) - Math.min(...counts) <= 1, `in turn: ${counts.join(' ')}`);
  t.ok(Math.abs(f.non2xx - counts[1]) <= 2, `the refused key's answers are the non-2xx: ${f.non2xx} of ${counts[1]}`);
  t.ok(Math.abs(f.short - counts[3]) <= 2, `the fourth key's cut answers are the short: ${f.short} of ${counts[3]}`);
  t.equal(f.errors, 0);
});
