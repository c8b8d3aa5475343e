// What Node used to answer for the gateway, over raw sockets to the shipped gateway.yaml: an HTTP/1.1 request without
// Host (a bare 400), an expectation other than 100-continue (a bare 417), CONNECT (the connection closed without an
// answer), a full URL as the target (an error in no route's format), and `100 Continue` sent on arrival, before a 401
// or 413 was known. Each is now answered in the format of the route the request names, and 100 Continue is sent only
// once the body is wanted: after the key was accepted, never before a 413.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { withLoggedGateway } from '../helpers/gateway.ts';
import { DEMO_KEY, SHIPPED_CONFIG } from '../helpers/e2e.ts';

interface Answer { status: number; headers: Record<string, string>; body: string; interim: string[] }

/** Reads what arrives on `socket` for `ms` (or until it closes). */
function collect(socket: Socket, ms: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (c: Buffer) => { text += c.toString('latin1'); };
    const done = () => { clearTimeout(timer); socket.off('data', onData).off('close', done); resolve(text); };
    const timer = setTimeout(done, ms);
    socket.on('data', onData).once('close', done);
  });
}

/** The interim (1xx) status lines, then the final answer: status, headers (lower-case names), body. */
function parse(text: string): Answer {
  const interim: string[] = [];
  let rest = text;
  while (/^HTTP\/1\.1 1\d\d /.test(rest)) {
    const end = rest.indexOf('\r\n\r\n');
    interim.push(rest.slice(0, rest.indexOf('\r\n')));
    rest = rest.slice(end + 4);
  }
  const end = rest.indexOf('\r\n\r\n');
  const [line, ...fields] = rest.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
  return { status: Number(line?.split(' ')[1]), headers, body: Buffer.from(rest.slice(end + 4), 'latin1').toString('utf8'), interim };
}

t.test('raw requests Node used to answer itself', async (t) => {
  const { gateway, requests } = await withLoggedGateway(t, SHIPPED_CONFIG);
  const port = Number(new URL(gateway.url).port);
  const open = async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    t.teardown(() => { socket.destroy(); });
    return socket;
  };
  const send = async (raw: string, ms = 1500) => {
    const socket = await open();
    socket.write(raw);
    return parse(await collect(socket, ms));
  };
  const messages = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  const anthropic = `x-api-key: ${DEMO_KEY}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n`;
  const anthropicError = (a: Answer) => JSON.parse(a.body) as { type: string; error: { type: string; code: string } };

  t.test('HTTP/1.1 without Host: a 400 in the route\'s format, and the connection closed', async (t) => {
    const a = await send(`POST /v1/messages HTTP/1.1\r\n${anthropic}content-length: ${messages.length}\r\n\r\n${messages}`);
    t.equal(a.status, 400);
    t.match(anthropicError(a), { type: 'error', error: { type: 'invalid_request_error', code: 'missing_host' } }, 'Anthropic\'s envelope');
    t.equal(a.headers.connection, 'close');
    t.ok(a.headers['request-id'], 'with the id header Anthropic\'s SDK reads');
    const gemini = await send(`POST /v1beta/models/gemini-2.5-flash:generateContent HTTP/1.1\r\nx-goog-api-key: ${DEMO_KEY}\r\ncontent-length: 2\r\n\r\n{}`);
    t.match(JSON.parse(gemini.body), { error: { code: 400, status: 'INVALID_ARGUMENT' } }, 'Google\'s envelope on a Gemini path');
    const old = await send('GET /healthz HTTP/1.0\r\n\r\n');
    t.equal(old.status, 200, 'HTTP/1.0 needs no Host');
  });

  t.test('an expectation other than 100-continue: a 417 in the route\'s format', async (t) => {
    const a = await send(`POST /v1/messages HTTP/1.1\r\nHost: gw\r\nExpect: 200-ok\r\n${anthropic}content-length: ${messages.length}\r\n\r\n${messages}`);
    t.equal(a.status, 417);
    t.match(anthropicError(a), { type: 'error', error: { code: 'expectation_failed' } });
    const chat = await send(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nExpect: x\r\nauthorization: Bearer ${DEMO_KEY}\r\ncontent-length: 2\r\n\r\n{}`);
    t.equal(chat.status, 417);
    t.match(JSON.parse(chat.body), { error: { code: 'expectation_failed', type: 'invalid_request_error' } }, 'OpenAI\'s envelope');
  });

  t.test('CONNECT: answered, then closed', async (t) => {
    const a = await send('CONNECT /v1/messages HTTP/1.1\r\nHost: gw\r\n\r\n');
    t.equal(a.status, 405);
    t.equal(a.headers.allow, 'POST', 'naming the methods the route takes');
    t.match(anthropicError(a), { type: 'error', error: { code: 'method_not_allowed' } }, 'in the route\'s format');
    const proxy = await send('CONNECT api.openai.com:443 HTTP/1.1\r\nHost: api.openai.com:443\r\n\r\n');
    t.equal(proxy.status, 405);
    t.match(JSON.parse(proxy.body), { error: { code: 'connect_not_supported' } });
    t.equal(proxy.headers.connection, 'close');
  });

  t.test('a full URL as the target: a 400 in the format of the route its path names', async (t) => {
    const a = await send(`POST http://gw.example/v1/messages HTTP/1.1\r\nHost: gw.example\r\n${anthropic}content-length: ${messages.length}\r\n\r\n${messages}`);
    t.equal(a.status, 400);
    t.match(anthropicError(a), { type: 'error', error: { type: 'invalid_request_error', code: 'absolute_url' } });
    const gemini = await send(`GET https://gw.example/v1beta/models?x=1 HTTP/1.1\r\nHost: gw.example\r\nx-goog-api-key: ${DEMO_KEY}\r\n\r\n`);
    t.match(JSON.parse(gemini.body), { error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });

  t.test('Expect: 100-continue: 100 Continue only once the key is accepted, never before a 401 or 413', async (t) => {
    const head = (auth: string, length: number) => `POST /v1/messages HTTP/1.1\r\nHost: gw\r\nExpect: 100-continue\r\nx-api-key: ${auth}\r\n`
      + `anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

    const refused = await send(head('sk-wrong-key', messages.length));
    t.equal(refused.status, 401, 'a wrong key: 401');
    t.same(refused.interim, [], 'and no 100 Continue before it');
    t.equal(anthropicError(refused).type, 'error');

    const large = await send(head(DEMO_KEY, 40 * 1024 * 1024));
    t.equal(large.status, 413, 'a body over the limit: 413');
    t.same(large.interim, [], 'and no 100 Continue before it');

    const socket = await open();
    socket.write(head(DEMO_KEY, messages.length));
    const waited = await collect(socket, 1000);
    t.equal(waited, 'HTTP/1.1 100 Continue\r\n\r\n', 'an accepted key: 100 Continue, and nothing else yet');
    socket.write(messages);
    const served = parse(await collect(socket, 3000));
    t.equal(served.status, 200, 'then the body is read and the request served');
    t.match(JSON.parse(served.body), { type: 'message' });
  });

  await sleep(50);
  t.notOk(requests.some((r) => r.status >= 500), 'no 5xx logged');
});
