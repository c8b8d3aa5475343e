// core/errors.ts: GatewayError, the core catalogue, and sendError over a real HTTP server (before and after headers).
import t from 'tap';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asGatewayError, coreErrors, GatewayError, sendError, statusClass } from '../../core/errors.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';

/** A server whose handler for each path is given by the test; closed when the test ends. */
async function serve(t: { teardown(fn: () => unknown): void }, handlers: Record<string, (res: ServerResponse) => void>): Promise<string> {
  const server = createServer((req, res) => {
    const handler = handlers[req.url ?? ''];
    if (handler) handler(res);
    else res.writeHead(500).end('no handler');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('GatewayError carries status, code, message, headers and param', async (t) => {
  const plain = new GatewayError(401, 'INVALID_API_KEY', 'bad key');
  t.ok(plain instanceof Error);
  t.equal(plain.name, 'GatewayError');
  t.equal(plain.status, 401);
  t.equal(plain.code, 'INVALID_API_KEY');
  t.equal(plain.message, 'bad key');
  t.strictSame(plain.headers, {});
  t.equal(plain.param, null);
  const extra = new GatewayError(429, 'rate_limited', 'slow down', { headers: { 'retry-after': '7' }, param: 'model' });
  t.strictSame(extra.headers, { 'retry-after': '7' });
  t.equal(extra.param, 'model');
});

t.test('statusClass and asGatewayError', async (t) => {
  t.equal(statusClass(200), '2xx');
  t.equal(statusClass(404), '4xx');
  t.equal(statusClass(599), '5xx');
  const ge = new GatewayError(418, 'teapot', 'short and stout');
  t.equal(asGatewayError(ge), ge, 'a GatewayError passes through unchanged');
  const internal = asGatewayError(new TypeError('secret detail'));
  t.equal(internal.status, 500);
  t.equal(internal.code, 'internal_error');
  t.equal(internal.message, 'The gateway failed to handle this request', 'internal details never reach the client');
  t.equal(asGatewayError('a string').status, 500);
});

t.test('the core error catalogue', async (t) => {
  const cases: [GatewayError, number, string, string][] = [
    [coreErrors.route_not_found('/x'), 404, 'route_not_found', 'No route for /x'],
    [coreErrors.method_not_allowed({ method: 'GET', allowed: ['POST', 'PUT'] }), 405, 'method_not_allowed', 'Method GET is not allowed here; use POST, PUT'],
    [coreErrors.request_too_large(1024), 413, 'request_too_large', 'Request body exceeds the limit of 1024 bytes'],
    [coreErrors.invalid_json('Unexpected token'), 400, 'invalid_json', 'Request body is not valid JSON: Unexpected token'],
    [coreErrors.invalid_body({ kind: 'not_an_object' }), 400, 'invalid_body', 'Request body must be a JSON object'],
    [coreErrors.request_aborted(), 400, 'request_aborted', 'The request body was not fully received'],
    [coreErrors.internal_error(), 500, 'internal_error', 'The gateway failed to handle this request'],
  ];
  for (const [err, status, code, message] of cases) t.strictSame([err.status, err.code, err.message], [status, code, message], code);
  t.strictSame(coreErrors.method_not_allowed({ method: 'GET', allowed: ['POST', 'PUT'] }).headers, { allow: 'POST, PUT' });
});

t.test('sendError with a format: native status, headers and OpenAI envelope', async (t) => {
  const url = await serve(t, {
    '/auth': (res) => sendError(res, new GatewayError(401, 'INVALID_API_KEY', 'Invalid API key'), 'req-1', openaiChat),
    '/rate': (res) => sendError(res, new GatewayError(429, 'rate_limit_exceeded', 'Too many requests', { headers: { 'retry-after': '30' }, param: 'model' }), 'req-2', openaiChat),
    '/override': (res) => sendError(res, new GatewayError(502, 'upstream_error', 'Ünïcode upstream failure', { headers: { 'content-type': 'text/plain', 'x-request-id': 'spoof' } }), 'req-3', openaiChat),
    '/gone': (res) => sendError(res, new GatewayError(404, 'model_not_found', 'The model does not exist'), 'req-4', openaiChat),
  });

  const auth = await fetch(`${url}/auth`);
  t.equal(auth.status, 401);
  t.equal(auth.headers.get('content-type'), 'application/json');
  t.equal(auth.headers.get('x-request-id'), 'req-1');
  const authText = await auth.text();
  t.equal(auth.headers.get('content-length'), String(Buffer.byteLength(authText)));
  t.strictSame(JSON.parse(authText), { error: { message: 'Invalid API key', type: 'invalid_request_error', param: null, code: 'INVALID_API_KEY' } });

  const rate = await fetch(`${url}/rate`);
  t.equal(rate.status, 429);
  t.equal(rate.headers.get('retry-after'), '30', 'the error\'s own headers are sent');
  t.equal(rate.headers.get('x-request-id'), 'req-2');
  t.strictSame(await rate.json(), { error: { message: 'Too many requests', type: 'rate_limit_error', param: 'model', code: 'rate_limit_exceeded' } });

  const override = await fetch(`${url}/override`);
  t.equal(override.status, 502);
  t.equal(override.headers.get('content-type'), 'application/json', 'an error header cannot replace the content type');
  t.equal(override.headers.get('x-request-id'), 'req-3', 'nor the request id');
  const overrideText = await override.text();
  t.equal(override.headers.get('content-length'), String(Buffer.byteLength(overrideText)), 'content-length counts bytes, not characters');
  t.strictSame(JSON.parse(overrideText), { error: { message: 'Ünïcode upstream failure', type: 'upstream_error', param: null, code: 'upstream_error' } });

  const gone = await fetch(`${url}/gone`);
  t.equal(gone.status, 404);
  t.strictSame(await gone.json(), { error: { message: 'The model does not exist', type: 'invalid_request_error', param: null, code: 'model_not_found' } });
});

t.test('sendError without a format: the neutral JSON envelope (route not known yet)', async (t) => {
  const url = await serve(t, {
    '/404': (res) => sendError(res, coreErrors.route_not_found('/nowhere'), 'req-n'),
    '/405': (res) => sendError(res, coreErrors.method_not_allowed({ method: 'GET', allowed: ['POST'] }), 'req-m'),
  });
  const nf = await fetch(`${url}/404`);
  t.equal(nf.status, 404);
  t.equal(nf.headers.get('content-type'), 'application/json');
  t.equal(nf.headers.get('x-request-id'), 'req-n');
  t.strictSame(await nf.json(), { error: { message: 'No route for /nowhere', type: 'not_found_error', code: 'route_not_found', request_id: 'req-n' } });

  const na = await fetch(`${url}/405`);
  t.equal(na.status, 405);
  t.equal(na.headers.get('allow'), 'POST');
  t.equal(na.headers.get('x-request-id'), 'req-m');
  t.strictSame(await na.json(), { error: { message: 'Method GET is not allowed here; use POST', type: 'invalid_request_error', code: 'method_not_allowed', request_id: 'req-m' } });
});

t.test('after headers were sent, sendError ends the stream with the format\'s stream error frame', async (t) => {
  const firstFrame = 'data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n';
  const startStream = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-s' });
    res.write(firstFrame);
  };
  let afterEnd: unknown = 'not called';
  const url = await serve(t, {
    '/with-format': (res) => { startStream(res); sendError(res, new GatewayError(502, 'upstream_failed', 'Upstream connection reset'), 'req-s', openaiChat); },
    '/no-format': (res) => { startStream(res); sendError(res, new GatewayError(502, 'upstream_failed', 'reset'), 'req-s'); },
    '/already-ended': (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('done');
      try { sendError(res, new GatewayError(500, 'late', 'late'), 'req-e', openaiChat); afterEnd = 'no throw'; } catch (err) { afterEnd = err; }
    },
  });

  const withFormat = await fetch(`${url}/with-format`);
  t.equal(withFormat.status, 200, 'the status already sent stays');
  t.equal(withFormat.headers.get('content-type'), 'text/event-stream');
  t.equal(await withFormat.text(),
    `${firstFrame}data: {"error":{"message":"Upstream connection reset","type":"upstream_error","param":null,"code":"upstream_failed"}}\n\n`);

  const noFormat = await fetch(`${url}/no-format`);
  t.equal(noFormat.status, 200);
  t.equal(await noFormat.text(), firstFrame, 'without a format the stream just ends');

  const ended = await fetch(`${url}/already-ended`);
  t.equal(await ended.text(), 'done');
  t.equal(afterEnd, 'no throw', 'a response already ended is left alone');
});
