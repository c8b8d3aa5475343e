// The request log line as an operator reads it: ISO-8601 time, cost, client address and user agent, and for a request
// that failed or was cut, who ended it, the error's type and the upstream's status; an unreachable upstream is a warning.
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { requestRecord } from '../../core/request-log.ts';
import type { Ctx } from '../../core/types.ts';
import { logLine, rid } from '../helpers/e2e.ts';
import { withLoggedGateway, writeConfig, type LoggedRequest } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { freePort } from '../helpers/process.ts';

const deadPort = await freePort();
const config = writeConfig(`
server: { host: 127.0.0.1, port: 0 }
platforms:
  sim: { simulator: true }
  dead: { base_url: "http://127.0.0.1:${deadPort}", format: openai-chat }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
  dead:
    platform: dead
    models: [gpt-4o-mini]
    accounts:
      - { id: dead-1, credential: dead-credential-1 }
keys:
  - { id: alice, key: sk-log-alice, group: main }
  - { id: dora, key: sk-log-dora, group: dead }
pricing:
  gpt-4o-mini: { input: 0.15, output: 0.60 }
pipelines:
  relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { max_switches: 0 } }]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
`);
const { gateway, requests, lines } = await withLoggedGateway(t, config);
const URL_ = gateway.url + '/v1/chat/completions';
const AGENT = 'log-test/1.0 (+https://example.test)';

/** Send one chat request with its own id and a user agent; returns the response and, once written, its log line. */
async function chat(label: string, opts: { key?: string; stream?: boolean; fault?: string; agent?: string } = {}): Promise<{ res: Response; line: LoggedRequest }> {
  const id = rid(label);
  const headers: Record<string, string> = { ...bearer(opts.key ?? 'sk-log-alice'), 'x-request-id': id, 'user-agent': opts.agent ?? AGENT };
  if (opts.fault) headers['x-simulator-fault'] = opts.fault;
  const res = await post(URL_, chatBody('gpt-4o-mini', 'Hello there, world!', opts.stream ? { stream: true, stream_options: { include_usage: true } } : {}), headers);
  await res.text().catch(() => '');
  return { res, line: await logLine(requests, id) };
}

const priced = (u: { input: number; output: number }) => (u.input * 0.15 + u.output * 0.60) / 1_000_000;

t.test('a completed request: ISO time, cost as metered, client address and user agent; no ending fields', async (t) => {
  const before = Date.now();
  const { res, line } = await chat('ok');
  t.equal(res.status, 200);
  t.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'ISO-8601 time in UTC');
  const at = Date.parse(line.time as string);
  t.ok(at >= before - 5 && at <= Date.now() + 5, 'the time is the request\'s');
  t.equal(line.outcome, 'completed');
  t.ok(line.usage && line.usage.output > 0, 'usage observed');
  t.ok((line.cost as number) > 0, 'cost logged');
  t.equal(line.cost, priced(line.usage!), 'cost = the usage at the configured prices');
  t.equal(line.client, '127.0.0.1');
  t.equal(line.user_agent, AGENT);
  for (const field of ['ended_by', 'error', 'upstream_status']) t.notOk(field in line, `no ${field} on a completed request`);
});

t.test('a long user agent is cut to 256 characters', async (t) => {
  const { line } = await chat('agent', { agent: 'a'.repeat(5000) });
  t.equal(line.user_agent, 'a'.repeat(256));
});

t.test('an error event inside a 200 stream: ended by the upstream, stream_error, upstream status 200, still priced', async (t) => {
  const { res, line } = await chat('midstream', { stream: true, fault: 'midstream-error' });
  t.equal(res.status, 200);
  t.equal(line.outcome, 'failed');
  t.equal(line.ended_by, 'upstream');
  t.equal(line.error, 'stream_error');
  t.equal(line.upstream_status, 200);
  t.type(line.cost, 'number', 'a failed stream is metered too');
});

t.test('a stream the upstream cut: ended by the upstream, stream_truncated', async (t) => {
  const { line } = await chat('cut-stream', { stream: true, fault: 'truncate' });
  t.equal(line.outcome, 'missing-terminal');
  t.equal(line.ended_by, 'upstream');
  t.equal(line.error, 'stream_truncated');
});

t.test('a whole answer the upstream cut short: the gateway answers 502, but the upstream ended it', async (t) => {
  const { res, line } = await chat('cut-body', { fault: 'truncate' });
  t.equal(res.status, 502);
  t.equal(line.ended_by, 'upstream');
  t.equal(line.error, 'upstream_truncated');
});

t.test('an upstream error status passed through: ended by the upstream, with its status', async (t) => {
  const { res, line } = await chat('400', { fault: 'status=400' });
  t.equal(res.status, 400);
  t.equal(line.ended_by, 'upstream');
  t.equal(line.error, 'upstream_error');
  t.equal(line.upstream_status, 400);
});

t.test('every account failed: the gateway\'s own error code, with the upstream\'s last status', async (t) => {
  const { res, line } = await chat('500', { fault: 'status=500' });
  t.equal(res.status, 502);
  t.equal(line.ended_by, 'gateway');
  t.equal(line.error, 'UPSTREAM_FAILED');
  t.equal(line.upstream_status, 500);
});

t.test('a refused key: ended by the gateway with its error code, no upstream status', async (t) => {
  const { res, line } = await chat('refused', { key: 'sk-nobody' });
  t.equal(res.status, 401);
  t.equal(line.ended_by, 'gateway');
  t.equal(line.error, 'INVALID_API_KEY');
  t.notOk('upstream_status' in line);
  t.equal(line.client, '127.0.0.1', 'a refusal still says who asked');
});

t.test('a client that leaves mid-stream: ended by the client', async (t) => {
  const id = rid('left');
  const abort = new AbortController();
  const res = await post(URL_, chatBody('gpt-4o-mini', 'Hello there, world!', { stream: true }), {
    ...bearer('sk-log-alice'), 'x-request-id': id, 'x-simulator-chunk-delay-ms': '200',
  }, abort.signal);
  const reader = res.body!.getReader();
  await reader.read();
  abort.abort();
  const line = await logLine(requests, id);
  t.equal(line.outcome, 'disconnected');
  t.equal(line.ended_by, 'client');
  t.equal(line.error, 'client_disconnected');
  t.equal(line.client, '127.0.0.1', 'the address is known though the socket is gone');
});

t.test('an unreachable upstream is a warning; the request line says the gateway answered, the attempt unreachable', async (t) => {
  const { res, line } = await chat('dead', { key: 'sk-log-dora' });
  t.equal(res.status, 502);
  t.equal(line.error, 'UPSTREAM_FAILED');
  t.same(line.attempts, [{ account: 'dead-1', status: 0, reason: 'unreachable' }]);
  const attempt = lines.find((l) => l.msg === 'upstream attempt failed' && l.req_id === line.req_id);
  t.ok(attempt, 'the failed attempt is logged');
  t.equal(attempt!.level, 'warn', 'at warn');
  t.equal(attempt!.reason, 'unreachable');
  t.equal(attempt!.code, 'ECONNREFUSED');

  // A refusal the pool expects now and then (a 5xx here) stays at info.
  const { line: refused } = await chat('500-info', { fault: 'status=500' });
  const routine = lines.find((l) => l.msg === 'upstream attempt failed' && l.req_id === refused.req_id);
  t.equal(routine!.level, 'info', 'an upstream error status is info');
});

t.test('every line has an ISO time and no secrets', async (t) => {
  t.ok(lines.length > 10);
  for (const l of lines) t.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `${l.msg}: ISO time`);
  const text = JSON.stringify(lines);
  for (const secret of ['sk-log-alice', 'sk-log-dora', 'upstream-credential-1', 'dead-credential-1']) t.notMatch(text, secret, `never ${secret}`);
});

t.test('a stream the drain cut at its timeout: ended by the gateway (drain_timeout), not by the client', async (t) => {
  // The drain's cut takes 10 s of a real gateway; the record is read from a request in that state instead.
  const ctx = {
    id: 'r1', req: { method: 'POST' }, route: { path: '/v1/chat/completions' }, stream: true, outcome: 'disconnected',
    timings: { start: 0, end: 5 }, attempts: undefined,
  } as unknown as Ctx;
  const caller = { client: '10.0.0.7', user_agent: 'x' };
  t.match(requestRecord(ctx, caller, 200, undefined, true), { ended_by: 'gateway', error: 'drain_timeout', client: '10.0.0.7' });
  t.match(requestRecord(ctx, caller, 200, undefined, false), { ended_by: 'client', error: 'client_disconnected' });
  // A client that left before any answer: the gateway's "no response" error does not make it the gateway's doing.
  t.match(requestRecord(ctx, caller, 500, new GatewayError(500, 'no_response', 'x'), false), { ended_by: 'client' });
});
