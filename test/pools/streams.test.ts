// Failover around the first byte, in every streaming format: an error inside a 200 stream before its first content moves
// the request to the next account (the client sees one clean stream); a failure after content began reaches the client
// as the format's own stream error and is never retried. And max_switches bounds the attempts.
import t from 'tap';
import type { Gateway } from '../../app/gateway.ts';
import { chat, credentialOf, poolConfig, poolGateway, postJson, records } from './helpers.ts';

const HEALTHY = 'healthy-credential';

interface Format {
  name: string;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  /** Text only a complete stream carries. */
  complete: RegExp;
  /** The format's own error event, as the client receives it. */
  failure: RegExp;
  /** How the classifier reads the simulator's error event (its Anthropic one says "Overloaded"). */
  reason: string;
}

const FORMATS: Format[] = [
  { name: 'chat', path: '/v1/chat/completions', body: chat('one two three four five', { stream: true }), complete: /data: \[DONE\]/, failure: /^data: \{"error":\{/m, reason: 'stream_error' },
  { name: 'responses', path: '/v1/responses', body: { model: 'gpt-5', input: 'one two three four five', stream: true }, complete: /event: response\.completed/, failure: /event: response\.failed/, reason: 'stream_error' },
  {
    name: 'anthropic', path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01' },
    body: { model: 'claude-haiku-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'one two three four five' }] },
    complete: /event: message_stop/, failure: /event: error\ndata: \{"type":"error"/, reason: 'overloaded',
  },
  {
    name: 'gemini', path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    body: { contents: [{ role: 'user', parts: [{ text: 'one two three four five' }] }] },
    complete: /"finishReason":"STOP"/, failure: /^data: \{"error":\{/m, reason: 'stream_error',
  },
];

const gatewayWith = async (faulty: string, proxy = '{}') => {
  const { gateway } = await poolGateway(t, poolConfig([
    { id: 'faulty', credential: faulty, priority: 1 },
    { id: 'healthy', credential: HEALTHY, priority: 2 },
  ], proxy));
  return gateway;
};

const count = (gateway: Gateway, credential: string) => gateway.simulators.sim.requests.filter((r) => credentialOf(r) === credential).length;

async function stream(gateway: Gateway, f: Format, id: string): Promise<{ status: number; text: string }> {
  const res = await postJson(gateway, f.path, f.body, { ...f.headers, 'x-request-id': id });
  return { status: res.status, text: await res.text() };
}

t.test('an error before the first content fails over: the client gets one clean stream from the next account', async (t) => {
  const EARLY = 'sim-fault:early-error';
  // No cool-down after an overloaded stream error, so every format still tries the faulty account first.
  const gateway = await gatewayWith(EARLY, '{ overload_ms: 0 }');
  for (const f of FORMATS) {
    const before = { faulty: count(gateway, EARLY), healthy: count(gateway, HEALTHY) };
    const { status, text } = await stream(gateway, f, `early-${f.name}`);
    t.equal(status, 200, `${f.name}: 200`);
    t.match(text, f.complete, `${f.name}: the complete stream of the healthy account`);
    t.notMatch(text, f.failure, `${f.name}: nothing of the failed attempt reached the client`);
    t.match(text, /Echo/, `${f.name}: the answer's content`);
    t.equal(count(gateway, EARLY) - before.faulty, 1, `${f.name}: the faulty account was tried once`);
    t.equal(count(gateway, HEALTHY) - before.healthy, 1, `${f.name}: the healthy account served it`);
  }
  const rs = await records(gateway);
  for (const f of FORMATS) {
    const r = rs.find((x) => x.client_request_id === `early-${f.name}`);
    t.same(r?.attempts, [{ account: 'faulty', status: 200, reason: f.reason }, { account: 'healthy', status: 200, reason: 'ok' }], `${f.name}: both attempts recorded`);
    t.equal(r?.ending, 'completed');
  }
});

t.test('a failure after the first content reaches the client as the format\'s stream error and is not retried', async (t) => {
  for (const fault of ['midstream-error', 'truncate']) {
    const credential = `sim-fault:${fault}`;
    const gateway = await gatewayWith(credential);
    for (const f of FORMATS) {
      const { status, text } = await stream(gateway, f, `${fault}-${f.name}`);
      t.equal(status, 200, `${fault} ${f.name}: the 200 was already sent`);
      t.match(text, /Echo/, `${fault} ${f.name}: the content before the failure arrived`);
      t.match(text, f.failure, `${fault} ${f.name}: then the format's own error event`);
      t.notMatch(text, f.complete, `${fault} ${f.name}: never a clean finish`);
    }
    t.equal(count(gateway, credential), FORMATS.length, `${fault}: one upstream request per client request`);
    t.equal(count(gateway, HEALTHY), 0, `${fault}: never retried on the healthy account`);
  }
});

t.test('max_switches bounds the attempts; then the pool answers 502 UPSTREAM_FAILED', async (t) => {
  // Distinct credentials (times is never reached), one per account.
  const accounts = [1, 2, 3, 4].map((i) => ({ id: `down-${i}`, credential: `sim-fault:status=503;times=${1000 + i}` }));
  const { gateway } = await poolGateway(t, poolConfig(accounts, '{ max_switches: 2 }', `  - { method: POST, path: /none/v1/chat/completions, format: openai-chat, pipeline: [auth, group-check, model-allowlist, metering, { proxy: { max_switches: 0 } }], upstream_path: /v1/chat/completions }`));
  const sim = gateway.simulators.sim;

  let res = await postJson(gateway, '/v1/chat/completions', chat(), { 'x-request-id': 'switches-2' });
  t.equal(res.status, 502);
  t.same(await res.json(), { error: { message: 'The upstream request failed on all 3 accounts tried (last: an upstream server error, HTTP 503)', type: 'upstream_error', param: null, code: 'UPSTREAM_FAILED' } });
  t.equal(sim.requests.length, 3, 'max_switches 2: three upstream attempts of four accounts');
  t.equal(new Set(sim.requests.map(credentialOf)).size, 3, 'each on a different account');

  res = await postJson(gateway, '/none/v1/chat/completions', chat(), { 'x-request-id': 'switches-0' });
  t.equal(res.status, 502);
  t.equal(sim.requests.length, 4, 'max_switches 0: one attempt');

  const rs = await records(gateway);
  t.equal(rs.find((r) => r.client_request_id === 'switches-2')?.attempts.length, 3);
  t.same(rs.find((r) => r.client_request_id === 'switches-0')?.attempts.map((a: any) => a.reason), ['upstream_error']);
});
