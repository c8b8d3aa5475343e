// USD limits under concurrency (hardening II, item 4): a request holds its estimated cost (prompt estimate × input price +
// max_tokens × output price) from admission until it settles, so requests in flight cannot overdraw quota_usd or the
// 5h/1d/7d windows together: waves of concurrent requests spend at most the limit and one estimate. A refused request
// gets the limit's error in the client's format and is not billed; holds go back when a request fails, when its client
// leaves, and when it succeeds. On the memory, file and Redis stores, through the real server and the simulator.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { eventually } from '../admin/helpers.ts';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, post } from '../helpers/http.ts';
import { redisForTest } from '../store/redis-server.ts';

// USD per 1M tokens: dear enough that a few requests reach the limits below.
const PRICE = { input: 100, output: 1000 };
const LIMIT = 0.05;
const keyOf = (id: string) => `sk-usd-${id}`;

const config = (store: string) => `
server: { host: 127.0.0.1, port: 0 }
store: { ${store} }
platforms:
  upstream: { simulator: true }
groups:
  main:
    platform: upstream
    models: [gpt-4o-mini]
    accounts:
      - { id: acct-1, credential: upstream-credential-1, concurrency: 500 }
keys:
${[['quota', `quota_usd: ${LIMIT}`], ['w5h', `usd_5h: ${LIMIT}`], ['w1d', `usd_1d: ${LIMIT}`], ['w7d', `usd_7d: ${LIMIT}`],
    ['failed', 'quota_usd: 0.03'], ['left', 'quota_usd: 0.03'], ['served', 'quota_usd: 0.03']]
    .map(([id, limits]) => `  - { id: ${id}, key: ${keyOf(id)}, group: main, limits: { ${limits} } }`).join('\n')}
pricing:
  gpt-4o-mini: { input: ${PRICE.input}, output: ${PRICE.output} }
`;

const chat = { model: 'gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'Hello there' }] };
/** What rate-limit holds for `chat`: its bytes / 4 at the input price, its max_tokens at the output price. */
const ESTIMATE = (Math.ceil(JSON.stringify(chat).length / 4) * PRICE.input + chat.max_tokens * PRICE.output) / 1e6;

const STORES: [string, (t: Test) => Promise<string>][] = [
  ['memory', async () => 'path: ":memory:"'],
  ['file', async () => `path: "${join(mkdtempSync(join(tmpdir(), 'gw-usd-')), 'gateway.db')}"`],
  ['redis', async (t) => {
    const { url, prefix } = await redisForTest(t, 'usd-holds');
    return `redis: "${url}", prefix: "${prefix}"`;
  }],
];

interface Answer { status: number; code?: string; limit: string | null; retry: string | null }

async function send(url: string, id: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await post(`${url}/v1/chat/completions`, chat, { ...bearer(keyOf(id)), ...headers });
  const body = await res.json() as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code, limit: res.headers.get('x-gateway-limit'), retry: res.headers.get('retry-after') };
}

/** `n` requests at once, each held 300 ms by the upstream before it answers (all in flight together). */
const wave = (url: string, id: string, n: number) =>
  Promise.all(Array.from({ length: n }, () => send(url, id, { 'x-simulator-fault': 'slow-headers=300' })));

async function usage(url: string, id: string): Promise<{ requests: number; cost: number }> {
  const body = await (await fetch(`${url}/v1/usage`, { headers: bearer(keyOf(id)) })).json() as { usage: { total: { requests: number; cost: number } } };
  return body.usage.total;
}

for (const [name, storeOf] of STORES) {
  t.test(`${name}: 200 requests in waves of up to 60 on a $${LIMIT} quota spend at most the quota and one estimate`, async (t) => {
    const gw = await withGateway(t, config(await storeOf(t)));
    const answers: Answer[] = [];
    for (const n of [60, 60, 40, 40]) answers.push(...await wave(gw.url, 'quota', n));
    const served = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 429);
    t.equal(served + refused.length, 200, 'each request served or refused');
    t.ok(refused.every((a) => a.code === 'API_KEY_QUOTA_EXHAUSTED' && a.limit === 'quota_exhausted'), 'refused with the quota error');
    t.ok(refused.some((a) => a.retry === '1'), 'while requests in flight hold the rest: come back in a second');
    const spent = await eventually(() => usage(gw.url, 'quota'), (u) => u.requests === served);
    t.equal(spent.requests, served, `only the ${served} served requests are billed`);
    t.ok(spent.cost <= LIMIT + ESTIMATE + 1e-9, `spent ${spent.cost} USD: at most ${LIMIT} + one estimate (${ESTIMATE})`);
    t.ok(spent.cost >= LIMIT - ESTIMATE, `and the quota was used (${spent.cost} USD)`);

    // Spent: refused for good, in each client's own format.
    const openai = await send(gw.url, 'quota');
    t.match(openai, { status: 429, code: 'API_KEY_QUOTA_EXHAUSTED' });
    t.equal(openai.retry, null, 'no retry-after once the quota is spent');
    const res = await post(`${gw.url}/v1/messages`, chat, { 'x-api-key': keyOf('quota'), 'anthropic-version': '2023-06-01' });
    t.equal(res.status, 429);
    t.match(await res.json(), { type: 'error', error: { type: 'rate_limit_error', message: /quota/ } }, 'in Anthropic\'s envelope');
    await sleep(200);
    t.equal((await usage(gw.url, 'quota')).requests, served, 'neither refusal billed');
  });

  t.test(`${name}: the 5h, 1d and 7d windows hold concurrent requests the same way`, async (t) => {
    const gw = await withGateway(t, config(await storeOf(t)));
    for (const w of ['5h', '1d', '7d']) {
      const id = `w${w}`;
      const answers = [...await wave(gw.url, id, 60), ...await wave(gw.url, id, 60)];
      const served = answers.filter((a) => a.status === 200).length;
      const refused = answers.filter((a) => a.status === 429);
      t.equal(served + refused.length, 120);
      t.ok(refused.length > 0 && refused.every((a) => a.code === 'API_KEY_USAGE_WINDOW_EXCEEDED' && a.limit === `window_exhausted:${w}`), `${w}: refused by the window`);
      const spent = await eventually(() => usage(gw.url, id), (u) => u.requests === served);
      t.ok(spent.cost <= LIMIT + ESTIMATE + 1e-9, `${w}: spent ${spent.cost} USD of ${LIMIT} (${served} served)`);
    }
  });

  t.test(`${name}: a hold goes back when the request fails, when its client leaves and when it succeeds`, async (t) => {
    const store = await storeOf(t);
    const gw = await withGateway(t, config(store));
    // $0.03 is held by 5 requests (estimates of ~$0.0072): a hold never given back would refuse the 6th.
    for (let i = 0; i < 8; i++) t.equal((await send(gw.url, 'failed', { 'x-simulator-fault': 'status=500' })).status, 502, `failure ${i + 1}`);
    // A client that leaves still pays for what the upstream answered (the stream is read on for its usage): five fit the
    // quota, and five holds never given back would refuse the check below.
    for (let i = 0; i < 5; i++) {
      const abort = new AbortController();
      const res = await post(`${gw.url}/v1/chat/completions`, { ...chat, stream: true },
        { ...bearer(keyOf('left')), 'x-simulator-chunk-delay-ms': '200' }, abort.signal);
      t.equal(res.status, 200, `stream ${i + 1}`);
      await res.body!.getReader().read(); // the first chunk, then the client leaves
      abort.abort();
      await eventually(() => usage(gw.url, 'left'), (u) => u.requests === i + 1);
    }
    for (let i = 0; i < 6; i++) t.equal((await send(gw.url, 'served')).status, 200, `success ${i + 1}`);
    for (const id of ['failed', 'left', 'served']) t.equal((await send(gw.url, id)).status, 200, `${id}: nothing is still held`);
    if (name !== 'redis') return;
    const [, url, prefix] = /redis: "(.*)", prefix: "(.*)"/.exec(store)!;
    const c = new Redis(url);
    t.teardown(() => c.quit());
    for (const id of ['failed', 'left', 'served']) {
      t.strictSame(await c.hgetall(`${prefix}{k:${id}}:held`), {}, `${id}: no hold left in Redis`);
    }
  });
}

t.test('redis: what a request holds while in flight: its estimate, with the group\'s default_max_tokens when it names no cap', async (t) => {
  const { url, prefix } = await redisForTest(t, 'usd-held');
  const gw = await withGateway(t, config(`redis: "${url}", prefix: "${prefix}"`));
  const c = new Redis(url);
  t.teardown(() => c.quit());
  const held = async () => Object.values(await c.hgetall(`${prefix}{k:quota}:held`)).reduce((n, v) => n + Number(v), 0);
  const slow = { ...bearer(keyOf('quota')), 'x-simulator-fault': 'slow-headers=600' };
  const capped = post(`${gw.url}/v1/chat/completions`, chat, slow);
  t.equal(await eventually(held, (n) => n > 0), Math.round(ESTIMATE * 1e9), 'prompt bytes / 4 at the input price, max_tokens at the output price');
  await (await capped).arrayBuffer();
  t.equal(await eventually(held, (n) => n === 0), 0, 'given back at settlement');
  const { max_tokens: _, ...uncapped } = chat;
  const open = post(`${gw.url}/v1/chat/completions`, uncapped, slow);
  const expected = (Math.ceil(JSON.stringify(uncapped).length / 4) * PRICE.input + 8192 * PRICE.output) * 1000; // nano-dollars
  t.equal(await eventually(held, (n) => n > 0), expected, 'no cap named: the group\'s default_max_tokens (8192)');
  await (await open).arrayBuffer();
});
