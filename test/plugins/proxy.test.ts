// Stage `proxy`: timeouts, unreachable upstreams, client disconnects, broken streams, what is forwarded, and bad bodies.
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { demoConfig, withGateway } from '../helpers/gateway.ts';
import { bearer, chatBody, expectOpenAIError, metricsText, post, rawRequest, sseData } from '../helpers/http.ts';
import { slowChatStream, startUpstream, type Exchange } from '../helpers/upstream.ts';

// A scripted upstream, for what the simulator cannot show: the moment the gateway hung up on it.
const scripted = await startUpstream(t, (req, res) => {
  switch (req.headers['x-script']) {
    case 'slow-stream': return slowChatStream(10, 200)(req, res, undefined as unknown as Exchange);
    case 'quiet-stream': return slowChatStream(3, 250)(req, res, undefined as unknown as Exchange);
    case 'hang': return; // never answer
    default:
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"no script","type":"invalid_request_error","param":null,"code":null}}');
  }
});

const proxyPipeline = (options: string) => `[auth, group-check, model-allowlist, { proxy: ${options} }]`;
// unreachable_ms 0: a timed-out account is not cooled down, so the tests after a timeout still reach it.
const config = demoConfig(`  - { method: POST, path: /slow/v1/chat/completions, format: openai-chat, pipeline: ${proxyPipeline('{ header_timeout_ms: 500, unreachable_ms: 0 }')}, upstream_path: /v1/chat/completions }
  - { method: POST, path: /ka/v1/chat/completions, format: openai-chat, pipeline: ${proxyPipeline('{ keepalive_ms: 100 }')}, upstream_path: /v1/chat/completions }
  - { method: POST, path: /nodrain/v1/chat/completions, format: openai-chat, pipeline: ${proxyPipeline('{ usage_drain_ms: 0 }')}, upstream_path: /v1/chat/completions }
  - { method: POST, path: /drain-ms/v1/chat/completions, format: openai-chat, pipeline: ${proxyPipeline('{ usage_drain_ms: 300 }')}, upstream_path: /v1/chat/completions }
  - { method: POST, path: /drain-bytes/v1/chat/completions, format: openai-chat, pipeline: ${proxyPipeline('{ usage_drain_bytes: 100 }')}, upstream_path: /v1/chat/completions }
`).replace('platforms:\n', `platforms:
  dead: { base_url: "http://127.0.0.1:1", format: openai-chat }
  scripted: { base_url: "${scripted.url}", format: openai-chat, forward_headers: [x-script] }
`).replace('groups:\n', `groups:
  dead-group:
    platform: dead
    models: [gpt-4o-mini]
    accounts: [ { id: dead-1, credential: dead-credential } ]
  scripted-group:
    platform: scripted
    models: [gpt-4o-mini]
    accounts: [ { id: scripted-1, credential: scripted-credential } ]
`).replace('keys:\n', `keys:
  - { id: dead, key: sk-dead-0007, group: dead-group }
  - { id: scripted, key: sk-scripted-0008, group: scripted-group }
`);

const gw = await withGateway(t, config);
const sim = gw.simulators.sim;
const CHAT = gw.url + '/v1/chat/completions';
const ALICE = bearer('sk-alice-0001');
const SCRIPTED = bearer('sk-scripted-0008');
const streamBody = chatBody('gpt-4o-mini', 'one two three four five six', { stream: true });

async function inFlightReachesZero(ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await metricsText(gw.url)).split('\n').includes('gateway_requests_in_flight 0')) return true;
    await sleep(20);
  }
  return false;
}

async function closedWithin(exchange: Exchange, ms: number): Promise<boolean> {
  return Promise.race([exchange.closed.then(() => true), sleep(ms).then(() => false)]);
}

// A header timeout fails the attempt over to the next account; with none left, the answer is the pool's 502.
t.test('upstream header timeout → native 502 UPSTREAM_FAILED in time', async (t) => {
  const start = Date.now();
  const res = await post(gw.url + '/slow/v1/chat/completions', chatBody(), { ...ALICE, 'x-simulator-fault': 'hang' });
  const elapsed = Date.now() - start;
  const err = await expectOpenAIError(t, res, 502, 'UPSTREAM_FAILED', 'upstream_error');
  t.equal(err.message, 'The upstream request failed on the only account tried (last: the upstream did not answer in time)');
  t.ok(elapsed >= 490 && elapsed < 2000, `answered after ${elapsed} ms (timeout 500 ms)`);

  const slow = await post(gw.url + '/slow/v1/chat/completions', chatBody(), { ...ALICE, 'x-simulator-fault': 'slow-headers=100' });
  t.equal(slow.status, 200, 'headers inside the timeout are relayed');
  t.equal((await slow.json() as { choices: Array<{ message: { content: string } }> }).choices[0].message.content, 'Echo: Hello there, world!');
});

t.test('the header timeout also hangs up on the upstream', async (t) => {
  const before = scripted.exchanges.length;
  const res = await post(gw.url + '/slow/v1/chat/completions', chatBody(), { ...SCRIPTED, 'x-script': 'hang' });
  await expectOpenAIError(t, res, 502, 'UPSTREAM_FAILED', 'upstream_error');
  t.equal(scripted.exchanges.length, before + 1);
  const exchange = scripted.exchanges[before];
  t.ok(await closedWithin(exchange, 1000), 'the upstream connection was closed');
  t.equal(exchange.finished, false);
});

t.test('connect failure → native 502, naming no account', async (t) => {
  const start = Date.now();
  const err = await expectOpenAIError(t, await post(CHAT, chatBody(), bearer('sk-dead-0007')), 502, 'UPSTREAM_FAILED', 'upstream_error');
  t.equal(err.message, 'The upstream request failed on the only account tried (last: the upstream could not be reached)');
  t.ok(Date.now() - start < 2000, 'a refused connection fails fast');
});

/** Starts the scripted 10 × 200 ms chat stream (it never reports usage) on `path`, reads its first chunk and leaves. */
async function leaveSlowStream(t: Test, path: string): Promise<{ exchange: Exchange; abortedAt: number }> {
  const before = scripted.exchanges.length;
  const controller = new AbortController();
  const res = await post(gw.url + path, streamBody, { ...SCRIPTED, 'x-script': 'slow-stream' }, controller.signal);
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  t.match(new TextDecoder().decode((await reader.read()).value), '"content":"w0 "', 'the first chunk arrived');
  const abortedAt = Date.now();
  controller.abort();
  reader.cancel().catch(() => {});
  return { exchange: scripted.exchanges[before], abortedAt };
}

// A stream whose prompt is not yet reported is read on for its usage (usage_drain_ms, usage_drain_bytes), then cut.
for (const [path, bound] of [['/drain-ms/v1/chat/completions', 'usage_drain_ms 300'], ['/drain-bytes/v1/chat/completions', 'usage_drain_bytes 100']]) {
  t.test(`a client that leaves a stream before its usage: the upstream is read on until ${bound}, then hung up on`, async (t) => {
    const { exchange, abortedAt } = await leaveSlowStream(t, path);
    t.notOk(await closedWithin(exchange, 150), 'the upstream is still read after the client left');
    // The whole stream would take 10 × 200 ms; the bound cuts it: 300 ms, or the first 200 ms chunk past 100 bytes.
    t.ok(await closedWithin(exchange, 1000), 'the upstream connection closed at the bound');
    t.equal(exchange.finished, false, 'cut short, not completed');
    t.ok(exchange.closedAt! - abortedAt >= 150 && exchange.closedAt! - abortedAt < 700, `closed ${exchange.closedAt! - abortedAt} ms after the client left`);
    t.ok(await inFlightReachesZero(1000), 'the gateway finished the request');
  });
}

t.test('with usage_drain_ms 0, a client that leaves mid-stream aborts the upstream request at once', async (t) => {
  const before = scripted.exchanges.length;
  const controller = new AbortController();
  const res = await post(gw.url + '/nodrain/v1/chat/completions', streamBody, { ...SCRIPTED, 'x-script': 'slow-stream' }, controller.signal);
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.match(new TextDecoder().decode(first.value), '"content":"w0 "', 'the first chunk arrived');
  const abortedAt = Date.now();
  controller.abort();
  reader.cancel().catch(() => {});
  const exchange = scripted.exchanges[before];
  // The whole stream would take 10 × 200 ms; the upstream must see the hang-up long before that.
  t.ok(await closedWithin(exchange, 1000), 'the upstream connection closed');
  t.equal(exchange.finished, false, 'the upstream response was cut short, not completed');
  t.ok(exchange.closedAt! - abortedAt < 500, `closed ${exchange.closedAt! - abortedAt} ms after the client left`);
  t.ok(await inFlightReachesZero(1000), 'the gateway finished the request');
});

t.test('a client that leaves before the upstream answers aborts the upstream request', async (t) => {
  const before = scripted.exchanges.length;
  const controller = new AbortController();
  const pending = post(CHAT, chatBody(), { ...SCRIPTED, 'x-script': 'hang' }, controller.signal).catch((err: Error) => err);
  while (scripted.exchanges.length === before) await sleep(5);
  controller.abort();
  t.type(await pending, Error, 'the client saw its own abort');
  const exchange = scripted.exchanges[before];
  t.ok(await closedWithin(exchange, 1000), 'the upstream connection closed');
  t.equal(exchange.finished, false);
  t.ok(await inFlightReachesZero(1000));
});

t.test('with the simulator and usage_drain_ms 0: the relay ends as soon as the client leaves (in-flight gauge back to 0)', async (t) => {
  const controller = new AbortController();
  const start = Date.now();
  const res = await post(gw.url + '/nodrain/v1/chat/completions', streamBody, { ...ALICE, 'x-simulator-chunk-delay-ms': '200' }, controller.signal);
  const reader = res.body!.getReader();
  await reader.read();
  controller.abort();
  reader.cancel().catch(() => {});
  t.ok(await inFlightReachesZero(1000), 'no request left in flight');
  // 13 frames at 200 ms would take 2.4 s; the relay ended with the client instead.
  t.ok(Date.now() - start < 1500, `finished after ${Date.now() - start} ms`);
});

t.test('a mid-stream upstream error frame reaches the client, without [DONE]', async (t) => {
  const res = await post(CHAT, streamBody, { ...ALICE, 'x-simulator-fault': 'midstream-error' });
  t.equal(res.status, 200);
  const text = await res.text();
  const frames = sseData(text);
  t.equal(frames.length, 4, 'role chunk, two content chunks, the error');
  t.equal(frames.slice(0, 3).map((f) => JSON.parse(f).choices[0].delta.content).join(''), 'Echo:');
  t.equal(frames[3], '{"error":{"message":"simulated mid-stream failure","type":"server_error","param":null,"code":null}}');
  t.notMatch(text, '[DONE]');
});

t.test('a truncated upstream stream gets an OpenAI error frame appended', async (t) => {
  const res = await post(CHAT, streamBody, { ...ALICE, 'x-simulator-fault': 'truncate' });
  t.equal(res.status, 200);
  const text = await res.text();
  const frames = sseData(text);
  t.equal(frames.length, 4, 'role chunk, two content chunks, the gateway\'s error');
  t.equal(frames.slice(0, 3).map((f) => JSON.parse(f).choices[0].delta.content).join(''), 'Echo:');
  t.equal(frames[3], '{"error":{"message":"The upstream stream ended before it completed","type":"upstream_error","param":null,"code":"upstream_stream_truncated"}}');
  t.notMatch(text, '[DONE]');
  t.ok(text.endsWith('\n\n'), 'the error frame is complete');
});

t.test('a truncated non-stream upstream body → native 502, not a dropped connection', async (t) => {
  let status: number | string;
  let type: unknown;
  try {
    const res = await post(CHAT, chatBody(), { ...ALICE, 'x-simulator-fault': 'truncate' });
    status = res.status;
    type = (await res.json() as { error?: { type?: unknown } }).error?.type;
  } catch (err) {
    status = `connection dropped (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message})`;
  }
  t.equal(status, 502, 'native 502');
  t.equal(type, 'upstream_error', 'in the OpenAI envelope');
});

t.test('upstream error statuses that do not fail over pass through with the upstream\'s body', async (t) => {
  const res = await post(CHAT, chatBody(), { ...ALICE, 'x-simulator-fault': 'status=422' });
  t.equal(res.status, 422);
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  t.match(res.headers.get('x-upstream-request-id'), /^req_sim_\d+$/);
  t.same(await res.json(), { error: { message: 'Simulated upstream error (status 422).', type: 'invalid_request_error', param: null, code: null } });
});

t.test('an upstream 503 fails over; with no other account the answer is the pool\'s 502, without the upstream\'s body', async (t) => {
  const res = await post(CHAT, chatBody(), { ...ALICE, 'x-simulator-fault': 'status=503' });
  const err = await expectOpenAIError(t, res, 502, 'UPSTREAM_FAILED', 'upstream_error');
  t.equal(err.message, 'The upstream request failed on the only account tried (last: an upstream server error, HTTP 503)');
  t.equal(res.headers.get('x-upstream-request-id'), null, 'no upstream internals');
});

t.test('headers: only the format\'s allow list goes upstream (never credentials, hop-by-hop, account or unknown headers), identity encoding', async (t) => {
  sim.clear();
  const body = JSON.stringify(chatBody());
  const res = await rawRequest(gw.url, {
    method: 'POST',
    path: '/v1/chat/completions?beta=true&alt=sse',
    headers: {
      connection: 'keep-alive, x-hop-custom',
      'x-hop-custom': 'connection-scoped',
      'keep-alive': 'timeout=5',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      'proxy-authorization': 'Basic c2stYWxpY2UtMDAwMQ==',
      cookie: 'session=sk-alice-0001',
      authorization: 'Bearer sk-alice-0001',
      'x-api-key': 'sk-alice-0001',
      'x-goog-api-key': 'sk-alice-0001',
      'api-key': 'sk-alice-0001',
      'anthropic-beta': 'prompt-caching-2024-07-31,tools-2024-05-16',
      'anthropic-version': '2023-06-01',
      'openai-organization': 'org-123',
      'openai-project': 'proj-123',
      'chatgpt-account-id': 'acct-9',
      'x-custom-trace': 'trace-42',
      'x-forwarded-for': '10.0.0.1',
      'openai-beta': 'responses=v1',
      'x-stainless-lang': 'js',
      'user-agent': 'test-client/1.0',
      session_id: 'sess-1',
      'accept-encoding': 'gzip, deflate, br',
      'x-request-id': 'client-trace-1',
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    },
    body,
  });
  t.equal(res.status, 200);
  t.not(res.headers['x-request-id'], 'client-trace-1', 'the gateway\'s own id, never the client\'s');
  t.equal(res.headers['x-client-request-id'], 'client-trace-1', 'a well-formed client request id is echoed');
  t.match(res.headers['x-upstream-request-id'], /^req_sim_\d+$/);
  t.equal(sim.requests.length, 1);
  const up = sim.requests[0];
  t.equal(up.path, '/v1/chat/completions', 'query parameters the chat format does not pass are dropped');
  t.equal(up.headers.authorization, 'Bearer upstream-credential-1');
  for (const name of [
    'x-api-key', 'x-goog-api-key', 'api-key', 'proxy-authorization', 'cookie', 'keep-alive', 'proxy-connection', 'te',
    'openai-organization', 'openai-project', 'chatgpt-account-id', 'x-custom-trace', 'x-forwarded-for', 'x-request-id',
    'anthropic-beta', 'anthropic-version',
  ]) {
    t.equal(up.headers[name], undefined, `${name} is not forwarded`);
  }
  t.equal(up.headers['x-hop-custom'], undefined, 'a header named in Connection is hop-by-hop (RFC 9110 §7.6.1)');
  t.equal(up.headers['openai-beta'], 'responses=v1', 'the format\'s own headers pass');
  t.equal(up.headers['x-stainless-lang'], 'js');
  t.equal(up.headers['user-agent'], 'test-client/1.0');
  t.equal(up.headers.session_id, 'sess-1', 'a session header the pool reads passes');
  t.equal(up.headers['accept-encoding'], 'identity', 'responses must arrive uncompressed to be scanned');
  t.notMatch(JSON.stringify(up), 'sk-alice-0001', 'the client key appears nowhere upstream');
});

t.test('the original body bytes go upstream when nothing changed; an alias re-serialises', async (t) => {
  sim.clear();
  const spaced = '{ "model" : "gpt-4o-mini",\n  "messages": [ {"role":"user",   "content":"spaced   out"} ] }';
  t.equal((await post(CHAT, spaced, ALICE)).status, 200);
  t.equal(sim.requests[0].body, spaced, 'byte for byte');
  t.equal(sim.requests[0].headers['content-length'], String(Buffer.byteLength(spaced)));
  const aliased = '{ "model" : "gpt-4o",  "messages": [ {"role":"user","content":"hi"} ] }';
  t.equal((await post(CHAT, aliased, ALICE)).status, 200);
  t.equal(sim.requests[1].body, '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}');
});

t.test('body limit: exactly 64kb passes, one byte more is a native 413', async (t) => {
  sim.clear();
  const sized = (bytes: number) => {
    const head = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"';
    const tail = '"}]}';
    return head + 'a'.repeat(bytes - head.length - tail.length) + tail;
  };
  const limit = 64 * 1024;
  t.equal(Buffer.byteLength(sized(limit)), limit);
  t.equal((await post(CHAT, sized(limit), ALICE)).status, 200, 'at the limit');
  t.equal(sim.requests.length, 1);
  const err = await expectOpenAIError(t, await post(CHAT, sized(limit + 1), ALICE), 413, 'request_too_large', 'invalid_request_error');
  t.equal(err.message, 'Request body exceeds the limit of 65536 bytes');

  const chunked = await rawRequest(gw.url, {
    method: 'POST', path: '/v1/chat/completions', chunked: true, body: sized(limit + 1000),
    headers: { ...ALICE, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  t.equal(chunked.status, 413, 'a chunked body without content-length is counted too');
  t.equal(JSON.parse(chunked.body).error.code, 'request_too_large');
  t.equal(sim.requests.length, 1, 'nothing over the limit was forwarded');
});

t.test('bodies that are not a JSON object are native 400s, never forwarded', async (t) => {
  sim.clear();
  const invalid = await expectOpenAIError(t, await post(CHAT, 'model=gpt-4o-mini', ALICE), 400, 'invalid_json', 'invalid_request_error');
  t.match(invalid.message, /^Request body is not valid JSON: /);
  await expectOpenAIError(t, await post(CHAT, '{"model":"gpt-4o-mini",', ALICE), 400, 'invalid_json', 'invalid_request_error');
  await expectOpenAIError(t, await post(CHAT, '', ALICE), 400, 'invalid_json', 'invalid_request_error');
  for (const body of ['[{"model":"gpt-4o-mini"}]', '"gpt-4o-mini"', 'null', '42']) {
    const err = await expectOpenAIError(t, await post(CHAT, body, ALICE), 400, 'invalid_body', 'invalid_request_error');
    t.equal(err.message, 'Request body must be a JSON object', body);
  }
  t.equal(sim.requests.length, 0);
});

t.test('a silent stream gets the format\'s keepalive comment', async (t) => {
  const res = await post(gw.url + '/ka/v1/chat/completions', streamBody, { ...SCRIPTED, 'x-script': 'quiet-stream' });
  t.equal(res.status, 200);
  const text = await res.text();
  const keepalives = text.split(': keepalive\n\n').length - 1;
  // Gaps of 250 ms with keepalive_ms 100 leave room for about two per gap.
  t.ok(keepalives >= 3, `${keepalives} keepalive comments`);
  t.same(sseData(text).slice(0, 3).map((f) => JSON.parse(f).choices[0].delta.content), ['w0 ', 'w1 ', 'w2 ']);
  t.equal(sseData(text).at(-1), '[DONE]');
});

t.test('x-gateway-overhead-ms and gateway_overhead_seconds: the time the gateway added, without the upstream\'s', async (t) => {
  const series = 'gateway_overhead_seconds_count{route="/v1/chat/completions",format="openai-chat"}';
  const count = async () => Number(/^gateway_overhead_seconds_count\{route="\/v1\/chat\/completions",format="openai-chat"\} (\d+)/m.exec(await metricsText(gw.url))?.[1] ?? 0);
  const before = await count();
  // A slow stream: the upstream's 10 × 200 ms are the upstream's, not the gateway's.
  for (const [body, headers, label] of [
    [chatBody(), {}, 'whole answer'],
    [streamBody, { 'x-simulator-chunk-delay-ms': '200' }, 'slow stream'],
  ] as const) {
    const started = performance.now();
    const res = await post(CHAT, body, { ...ALICE, ...headers });
    await res.text();
    const total = performance.now() - started;
    const overhead = Number(res.headers.get('x-gateway-overhead-ms'));
    t.ok(res.headers.has('x-gateway-overhead-ms') && overhead >= 0, `${label}: x-gateway-overhead-ms ${overhead}`);
    t.ok(overhead < total, `${label}: less than the ${total.toFixed(1)} ms the client waited`);
    if (label === 'slow stream') t.ok(total > 1000 && overhead < 200, 'the upstream\'s pauses are not counted');
  }
  let after = before;
  for (let i = 0; i < 20 && after < before + 2; i++, await sleep(25)) after = await count();
  t.equal(after, before + 2, `${series}: one observation per relayed request`);
});
