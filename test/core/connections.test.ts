// What the server does with hostile connections: a large body it will not read is not read (the answer closes the
// connection), Node's own parse errors get a body in the route's format, idle and slow connections are closed after
// server.headers_timeout_ms, and server.max_connections caps how many are held.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { withGateway } from '../helpers/gateway.ts';

const config = (server: string) => `
server: { host: 127.0.0.1, port: 0, ${server} }
store: { path: ":memory:" }
platforms:
  sim: { simulator: true }
groups:
  main: { platform: sim, models: [gpt-4o-mini], accounts: [{ id: a1, credential: c1 }] }
keys:
  - { id: alice, key: sk-alice-0001, group: main }
pipelines:
  relay: [auth, group-check, model-allowlist, proxy]
routes:
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: relay }
  - { method: GET, path: /v1beta/models, format: gemini, pipeline: [auth, list-models] }
`;

interface Conn { socket: Socket; received: () => string; closed: Promise<number> }

/** A raw connection that records what the server sends and when it closes (ms after opening). */
async function open(url: string): Promise<Conn> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  const opened = performance.now();
  let text = '';
  socket.on('data', (c: Buffer) => { text += c.toString('latin1'); });
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - opened)));
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  return { socket, received: () => text, closed };
}

const within = <T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  Promise.race([p, sleep(ms).then(() => 'timeout' as const)]);

/** Keeps writing body bytes (chunk-framed when `chunked`) until the server closes the connection or `ms` pass; returns the bytes written. */
async function pour(conn: Conn, ms: number, chunked: boolean): Promise<number> {
  const data = Buffer.alloc(64 * 1024, 97);
  const chunk = chunked ? Buffer.concat([Buffer.from('10000\r\n'), data, Buffer.from('\r\n')]) : data;
  let written = 0;
  let open = true;
  void conn.closed.then(() => { open = false; });
  const deadline = performance.now() + ms;
  while (open && performance.now() < deadline) {
    if (conn.socket.write(chunk)) written += chunk.length;
    else { written += chunk.length; await new Promise((r) => { conn.socket.once('drain', r); setTimeout(r, 50); }); }
    await sleep(0);
  }
  return written;
}

t.test('defect 6: an early answer to a huge declared body closes the connection instead of reading it all', async (t) => {
  const gw = await withGateway(t, config('headers_timeout_ms: 5000'));
  for (const framing of ['content-length: 10000000000', 'transfer-encoding: chunked']) {
    const conn = await open(gw.url);
    conn.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`);
    // A client that keeps sending whatever it is told: the server reads (and drops) a bounded amount, then closes.
    const written = await pour(conn, 4000, framing.includes('chunked'));
    const closedAfter = await within(conn.closed, 1000);
    t.match(conn.received(), /^HTTP\/1\.1 401 /, `${framing}: the 401 reached the client`);
    t.match(conn.received(), /connection: close/i, `${framing}: saying the connection closes`);
    t.not(closedAfter, 'timeout', `${framing}: the server closed the connection`);
    t.ok(written < 64 * 1024 * 1024, `${framing}: ${(written / 1048576).toFixed(1)} MB written before the close, not an endless read`);
    conn.socket.destroy();
  }
  // A polite client stops sending at the early answer: the connection still closes rather than wait for the rest.
  const polite = await open(gw.url);
  polite.socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 10000000000\r\n\r\n' + 'a'.repeat(1000));
  t.not(await within(polite.closed, 3000), 'timeout', 'closed although the client went quiet');
  t.match(polite.received(), /^HTTP\/1\.1 401 [^]*connection: close/i);
});

t.test('defect 6: a small unread body is drained and the connection serves the next request', async (t) => {
  const gw = await withGateway(t, config('headers_timeout_ms: 5000'));
  const conn = await open(gw.url);
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(1000) }] });
  const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
  conn.socket.write(request + request);
  for (let i = 0; i < 50 && (conn.received().match(/HTTP\/1\.1 401/g) ?? []).length < 2; i++) await sleep(20);
  t.equal((conn.received().match(/HTTP\/1\.1 401/g) ?? []).length, 2, 'both requests answered on one connection');
  t.notMatch(conn.received(), /connection: close/i);
  conn.socket.destroy();
});

t.test('defect 8: what Node cannot parse gets a JSON body in the format of the route the request line names', async (t) => {
  const gw = await withGateway(t, config('headers_timeout_ms: 5000'));
  const cases: [string, RegExp, (body: any) => boolean][] = [
    ['GET /v1beta/models HTTP/1.1\r\nhost: x\r\nbad header line\r\n\r\n', /^HTTP\/1\.1 400 /, (b) => b.error.code === 400 && b.error.status === 'INVALID_ARGUMENT'],
    [`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, /^HTTP\/1\.1 431 /, (b) => b.error.code === 'headers_too_large' && b.error.type === 'invalid_request_error'],
    [`POST /v1beta/models/m:generateContent HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, /^HTTP\/1\.1 431 /, (b) => b.error.status === 'INVALID_ARGUMENT' && b.error.details[0].reason === 'headers_too_large'],
    ['NONSENSE\r\n\r\n', /^HTTP\/1\.1 400 /, (b) => b.error.code === 'malformed_request'],
  ];
  for (const [raw, status, shape] of cases) {
    const conn = await open(gw.url);
    conn.socket.write(raw);
    t.not(await within(conn.closed, 2000), 'timeout', 'closed after the answer');
    const text = conn.received();
    t.match(text, status, raw.slice(0, 30));
    t.match(text, /content-type: application\/json/i);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    t.ok(shape(body), `${raw.slice(0, 30)}: ${JSON.stringify(body).slice(0, 160)}`);
  }
});

t.test('defect 9: idle and slow connections are closed after headers_timeout_ms', async (t) => {
  const gw = await withGateway(t, config('headers_timeout_ms: 1000, max_connections: 0'));
  const idle = await Promise.all(Array.from({ length: 40 }, () => open(gw.url)));
  const slow = await Promise.all(Array.from({ length: 10 }, () => open(gw.url)));
  for (const c of slow) c.socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n');
  // A slowloris client trickles a header line now and then.
  const trickle = setInterval(() => { for (const c of slow) if (!c.socket.destroyed) c.socket.write('x-slow: 1\r\n'); }, 200);
  const closed = await Promise.all([...idle, ...slow].map((c) => within(c.closed, 4000)));
  clearInterval(trickle);
  t.equal(closed.filter((c) => c === 'timeout').length, 0, 'all 50 closed by the server');
  t.ok(closed.every((ms) => ms !== 'timeout' && ms < 3500), `within ${Math.round(Math.max(...closed.map(Number)))} ms (timeout 1 s, checked every second)`);
  t.match(slow[0].received(), /^HTTP\/1\.1 408 /, 'a slow client is told 408');
});

t.test('defect 9: server.max_connections caps the connections held at once', async (t) => {
  const gw = await withGateway(t, config('headers_timeout_ms: 10000, max_connections: 20'));
  const held = await Promise.all(Array.from({ length: 20 }, () => open(gw.url)));
  await sleep(100);
  const extra = await open(gw.url);
  t.not(await within(extra.closed, 1000), 'timeout', 'the 21st connection is closed at once');
  t.equal((await Promise.all(held.map((c) => within(c.closed, 200)))).filter((c) => c !== 'timeout').length, 0, 'the first 20 are held');
  for (const c of held) c.socket.destroy();
  await sleep(100);
  const res = await fetch(`${gw.url}/v1beta/models`, { headers: { 'x-goog-api-key': 'sk-alice-0001' } });
  t.equal(res.status, 200, 'served again once they are gone');
});
