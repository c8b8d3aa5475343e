// The bounded wait for a free account slot: a request waits while the only account (concurrency 1) is busy and is served
// when it frees; past queue_size or queue_timeout_ms it gets the gateway's own 429; a waiting stream gets the format's
// keepalive (its 200 goes out with the first one) and, if the wait then fails, the format's stream error.
import t from 'tap';
import { metricValue, metricsText } from '../helpers/http.ts';
import { chat, poolConfig, poolGateway, postJson, sleep } from './helpers.ts';

// A slow stream holds the account's one slot: 12 words, ~14 frames, 100 ms apart.
const LONG = 'one two three four five six seven eight nine ten eleven';
const SLOW = { 'x-simulator-chunk-delay-ms': '100' };
const route = (prefix: string, proxy: string) =>
  `  - { method: POST, path: /${prefix}/v1/chat/completions, format: openai-chat, pipeline: [auth, group-check, model-allowlist, { proxy: ${proxy} }], upstream_path: /v1/chat/completions }`;

const { gateway } = await poolGateway(t, poolConfig([{ id: 'only', credential: 'only-credential', concurrency: 1 }], '{ keepalive_ms: 100 }', [
  route('small', '{ queue_size: 1, keepalive_ms: 0 }'),
  route('short', '{ queue_timeout_ms: 300, keepalive_ms: 100 }'),
].join('\n')));
const sim = gateway.simulators.sim;

/** Start a slow stream that holds the slot; resolves with its whole text once it ends. */
async function holdSlot(): Promise<{ text: Promise<string> }> {
  const res = await postJson(gateway, '/v1/chat/completions', chat(LONG, { stream: true }), SLOW);
  return { text: res.text() };
}

t.test('a request waits for the busy account and is served when it frees', async (t) => {
  const holder = await holdSlot();
  const start = Date.now();
  const res = await postJson(gateway, '/v1/chat/completions', chat('waiting'));
  const waited = Date.now() - start;
  t.equal(res.status, 200);
  t.equal((await res.json() as { choices: { message: { content: string } }[] }).choices[0].message.content, 'Echo: waiting');
  t.match(await holder.text, /\[DONE\]/, 'the holder finished first');
  t.ok(waited >= 500, `waited ${waited} ms for the slot (the holder streams ~1.4 s)`);
  const m = await metricsText(gateway.url);
  t.ok(metricValue(m, 'gateway_queue_wait_seconds_count{group="pool"}')! >= 1, 'the wait is in the histogram');
  t.ok(metricValue(m, 'gateway_queue_wait_seconds_sum{group="pool"}')! >= 0.5);
});

t.test('queue full → 429 ACCOUNTS_BUSY_QUEUE_FULL; wait too long → 429 ACCOUNTS_BUSY_TIMEOUT', async (t) => {
  const holder = await holdSlot();
  const waiting = postJson(gateway, '/small/v1/chat/completions', chat('first in line'));
  await sleep(250);
  const full = await postJson(gateway, '/small/v1/chat/completions', chat('second in line'));
  t.equal(full.status, 429);
  t.equal(full.headers.get('x-gateway-limit'), 'accounts_busy', 'the gateway\'s own limit');
  t.equal((await full.json() as { error: { code: string } }).error.code, 'ACCOUNTS_BUSY_QUEUE_FULL');

  const start = Date.now();
  const timedOut = await postJson(gateway, '/short/v1/chat/completions', chat('impatient'));
  t.equal(timedOut.status, 429);
  t.ok(Date.now() - start >= 290, 'after queue_timeout_ms');
  t.equal(timedOut.headers.get('x-gateway-limit'), 'accounts_busy');
  t.same(await timedOut.json(), { error: { message: 'Every upstream account of group "pool" stayed busy for 0.3 s; retry shortly', type: 'rate_limit_error', param: null, code: 'ACCOUNTS_BUSY_TIMEOUT' } });

  t.equal((await waiting).status, 200, 'the one in line was served');
  await holder.text;
});

t.test('a waiting stream gets keepalives, then the whole stream; a wait that fails ends it with the stream error', async (t) => {
  const holder = await holdSlot();
  const res = await postJson(gateway, '/v1/chat/completions', chat('streamed after waiting', { stream: true }));
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const text = await res.text();
  const keepalives = text.split(': keepalive\n\n').length - 1;
  t.ok(keepalives >= 3, `${keepalives} keepalives while it waited`);
  t.ok(text.startsWith(': keepalive\n\n'), 'the keepalive came first');
  t.match(text, /"content":" waiting"/, 'then the answer');
  t.match(text, /data: \[DONE\]\n\n$/, 'and a clean end');
  await holder.text;

  const holder2 = await holdSlot();
  const failed = await postJson(gateway, '/short/v1/chat/completions', chat('gives up', { stream: true }));
  t.equal(failed.status, 200, 'committed by the keepalive');
  const body = await failed.text();
  t.match(body, /^: keepalive\n\n/);
  t.match(body, /data: \{"error":\{"message":"Every upstream account of group \\"pool\\" stayed busy[^"]*","type":"rate_limit_error","param":null,"code":"ACCOUNTS_BUSY_TIMEOUT"\}\}\n\n$/);
  await holder2.text;
});

t.test('a client that leaves while waiting frees its place in the queue and takes no slot', async (t) => {
  const holder = await holdSlot();
  const controller = new AbortController();
  const leaving = fetch(gateway.url + '/small/v1/chat/completions', {
    method: 'POST', signal: controller.signal,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-pool-0001' }, body: JSON.stringify(chat('leaves')),
  }).catch((err: Error) => err);
  await sleep(100);
  const before = sim.requests.length;
  controller.abort();
  t.type(await leaving, Error);
  await sleep(50);
  const next = await postJson(gateway, '/small/v1/chat/completions', chat('takes its place'));
  t.equal(next.status, 200, 'the place in line was free again');
  t.equal(sim.requests.length, before + 1, 'the leaver never reached the upstream');
  await holder.text;
});
