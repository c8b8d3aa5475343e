// Fault injection on the simulator: error statuses, broken streams, hangs and slow headers.
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { chunksOf, contentOf, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const messages = [{ role: 'user', content: 'Hello, world! How are you today?' }];
const streamBody = { model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } };
const fault = (value: string) => ({ 'x-simulator-fault': value });

t.test('status faults answer with the OpenAI error envelope', async (t) => {
  const expected: Record<number, [string, string | null]> = {
    429: ['requests', 'rate_limit_exceeded'],
    500: ['server_error', null],
    503: ['server_error', null],
    401: ['invalid_request_error', 'invalid_api_key'],
    400: ['invalid_request_error', null],
    404: ['invalid_request_error', null],
  };
  for (const [status, [type, code]] of Object.entries(expected)) {
    const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault(`status=${status}`));
    t.equal(res.status, Number(status));
    t.equal(res.headers.get('retry-after'), status === '429' ? '1' : null, `retry-after on ${status}`);
    t.match(res.headers.get('x-request-id'), /^req_sim_/);
    const { error } = await res.json();
    t.same({ type: error.type, code: error.code, param: error.param }, { type, code, param: null }, `envelope for ${status}`);
    t.type(error.message, 'string');
  }
});

t.test('status faults apply to streams and to the models list', async (t) => {
  const stream = await postJson(sim, '/v1/chat/completions', streamBody, fault('status=503'));
  t.equal(stream.status, 503);
  t.match(stream.headers.get('content-type'), /^application\/json/);
  const models = await fetch(sim.url + '/v1/models', { headers: { authorization: 'Bearer x', ...fault('status=429') } });
  t.equal(models.status, 429);
});

t.test('a malformed fault header is a 400, not a crash', async (t) => {
  for (const value of ['status=abc', 'explode', 'slow-headers=-5']) {
    const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault(value));
    t.equal(res.status, 400, value);
    t.match((await res.json()).error.message, /x-simulator-fault/);
  }
});

t.test('midstream-error: two content chunks, then an error frame and no [DONE]', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', streamBody, fault('midstream-error'));
  t.equal(res.status, 200);
  const text = await res.text();
  t.notMatch(text, /\[DONE\]/);
  const chunks = chunksOf(text);
  t.equal(chunks.length, 4, 'role chunk, two content chunks, error');
  t.equal(contentOf(chunks.slice(0, 3)), 'Echo:');
  t.ok(chunks.slice(0, 3).every((c) => c.choices[0].finish_reason === null), 'no finish before the error');
  t.ok(text.endsWith('data: {"error":{"message":"simulated mid-stream failure","type":"server_error","param":null,"code":null}}\n\n'));
});

t.test('truncate: two content chunks, then the socket is destroyed', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', streamBody, fault('truncate'));
  t.equal(res.status, 200);
  const decoder = new TextDecoder();
  let received = '';
  const reader = res.body!.getReader();
  const failure = await (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        received += decoder.decode(value, { stream: true });
      }
    } catch (err) {
      return err;
    }
  })();
  t.ok(failure, 'reading the body fails: the stream was cut, not finished');
  const chunks = chunksOf(received);
  t.equal(chunks.length, 3, 'role chunk and two content chunks arrived');
  t.equal(contentOf(chunks), 'Echo:');
  t.notMatch(received, /\[DONE\]|"usage":\{/);
});

t.test('truncate on a non-stream reply cuts the body short', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault('truncate'));
  t.equal(res.status, 200);
  await t.rejects(res.text());
});

t.test('hang: no headers ever; the handler lets go when the client leaves', async (t) => {
  sim.clear();
  const controller = new AbortController();
  const pending = fetch(sim.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer x', ...fault('hang') },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
    signal: controller.signal,
  }).then(() => 'answered', (err: Error) => err.name);
  const raced = await Promise.race([pending, new Promise((r) => setTimeout(r, 300, 'waiting'))]);
  t.equal(raced, 'waiting', 'no response within 300 ms');
  t.equal(sim.requests.length, 1, 'the hanging request was still recorded');
  controller.abort();
  t.equal(await pending, 'AbortError');
  // The server stays healthy after an abandoned hang.
  const ok = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages });
  t.equal(ok.status, 200);
  await ok.text();
});

t.test('slow-headers: waits, then answers normally', async (t) => {
  const started = Date.now();
  const res = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault('slow-headers=150'));
  const elapsed = Date.now() - started;
  t.equal(res.status, 200);
  t.ok(elapsed >= 140, `headers after ${elapsed} ms`);
  t.equal((await res.json()).choices[0].message.content, 'Echo: Hello, world! How are you today?');
});

t.test('faults combine with commas', async (t) => {
  const started = Date.now();
  const res = await postJson(sim, '/v1/chat/completions', streamBody, fault('slow-headers=100, midstream-error'));
  const text = await res.text();
  t.ok(Date.now() - started >= 90);
  t.match(text, /simulated mid-stream failure/);
});

t.test('faults come after the credential check', async (t) => {
  const res = await fetch(sim.url + '/v1/chat/completions', { method: 'POST', headers: fault('status=500'), body: '{}' });
  t.equal(res.status, 401);
});

t.test('close() returns promptly even with a request hanging', async (t) => {
  const other = await startSimulator();
  const pending = postJson(other, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault('hang')).catch((err: unknown) => err);
  await new Promise((r) => setTimeout(r, 50));
  const started = Date.now();
  await other.close();
  t.ok(Date.now() - started < 1000, `closed in ${Date.now() - started} ms`);
  t.type(await pending, Error, 'the hanging client sees the connection drop');
});

t.test('early-error: the error frame where the content would begin, before any content', async (t) => {
  const res = await postJson(sim, '/v1/chat/completions', streamBody, fault('early-error'));
  t.equal(res.status, 200);
  const chunks = chunksOf(await res.text());
  t.equal(chunks.length, 2, 'the role chunk, then the error');
  t.equal(contentOf(chunks.slice(0, 1)), '', 'no content before it');
  t.same(chunks[1], { error: { message: 'simulated mid-stream failure', type: 'server_error', param: null, code: null } });
});

t.test('retry-after and retry-after-ms on a status fault', async (t) => {
  const a = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault('status=429, retry-after=7'));
  t.equal(a.headers.get('retry-after'), '7');
  t.equal(a.headers.get('retry-after-ms'), null);
  const b = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault('status=429, retry-after-ms=1500'));
  t.same([b.headers.get('retry-after-ms'), b.headers.get('retry-after')], ['1500', '2']);
  const c = await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault('status=503, retry-after=3'));
  t.same([c.status, c.headers.get('retry-after')], [503, '3']);
  for (const bad of ['retry-after', 'retry-after-ms=-1', 'times=x']) {
    t.equal((await postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, fault(bad))).status, 400, bad);
  }
});

t.test('a sim-fault: credential carries its own faults, for its first `times` requests, over the header\'s', async (t) => {
  const as = (credential: string, headers: Record<string, string> = {}) =>
    postJson(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', messages }, { authorization: `Bearer ${credential}`, ...headers });
  const credential = 'sim-fault:status=429;retry-after-ms=500;times=2';
  const first = await as(credential);
  t.same([first.status, first.headers.get('retry-after-ms')], [429, '500']);
  t.equal((await as(credential)).status, 429, 'the second request too');
  t.equal((await as(credential)).status, 200, 'then it answers normally');
  t.equal((await as('sim-fault:status=500,times=1')).status, 500, 'commas separate items as well');
  t.equal((await as('sim-fault:status=500,times=1')).status, 200, 'each credential counts its own requests');
  t.equal((await as('sim-fault:status=503', fault('status=400'))).status, 503, 'the credential\'s fault wins over the header\'s');
  t.equal((await as('sim-fault:times=0;status=503', fault('status=400'))).status, 400, 'once used up, the header applies again');
  t.equal((await as('plain-credential', fault('status=502'))).status, 502, 'a plain credential: the header as before');
  t.equal((await as('sim-fault:explode')).status, 400, 'a malformed credential fault is a 400');
});
