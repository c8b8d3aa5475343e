// The upstream hop on undici (plugins/proxy/upstream-response.ts) reads as node's IncomingMessage did: the same headers
// for the same response bytes (repeated ones joined by node's rules), the body whole and in order even to a reader that
// falls behind (undici stops reading until it catches up), and a body cut short as a cut: 'aborted', not complete, an
// error only to a reader listening for one.
import { get } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { UpstreamResponse, upstreamAgent } from '../../plugins/proxy/upstream-response.ts';

/** A server answering every connection with `reply` (raw bytes), then `after` (e.g. to cut it). */
async function rawServer(t: { teardown(f: () => unknown): void }, reply: (socket: Socket) => void): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => reply(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => { for (const s of sockets) s.destroy(); server.close(); });
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

/** One request through the upstream client: the response once its headers arrive, or the failure. */
function send(url: string): Promise<UpstreamResponse> {
  const agent = upstreamAgent({ connectTimeoutMs: 1000, maxSockets: 0 });
  return new Promise((resolve, reject) => {
    const res = new UpstreamResponse();
    agent.dispatch({ origin: url, path: '/', method: 'GET', headers: [] }, res.handler(resolve, reject));
  });
}

const HEAD = [
  'HTTP/1.1 200 OK', 'Content-Type: application/json', 'content-type: text/plain', 'Set-Cookie: a=1', 'Set-Cookie: b=2',
  'X-Thing: one', 'x-thing: two', 'Cookie: c=3', 'Cookie: d=4', 'Retry-After: 5', 'Retry-After: 9', 'Cache-Control: no-cache',
  'Cache-Control: no-store', 'Server: upstream', 'X-Request-Id: up-1',
];

t.test('the same headers as node\'s IncomingMessage for the same response, repeated ones included', async (t) => {
  const url = await rawServer(t, (s) => s.end([...HEAD, 'Content-Length: 2', '', 'ok'].join('\r\n')));
  const ours = await send(url);
  const body: Buffer[] = [];
  for await (const chunk of ours) body.push(chunk as Buffer);
  const node = await new Promise<import('node:http').IncomingMessage>((resolve) => get(url, resolve));
  node.resume();
  t.equal(ours.statusCode, 200);
  t.strictSame(ours.headers, node.headers);
  t.equal(Buffer.concat(body).toString(), 'ok');
  t.equal(ours.complete, true);
});

t.test('an informational answer before the response (103 Early Hints) is not taken for it', async (t) => {
  const url = await rawServer(t, (s) => s.end('HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n'
    + 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nfinal'));
  // What the relays see is what the response says when it starts (undici parses both answers in one read).
  const started = await new Promise<{ res: UpstreamResponse; status: number; link: unknown }>((resolve, reject) => {
    const res = new UpstreamResponse();
    upstreamAgent({ connectTimeoutMs: 1000, maxSockets: 0 }).dispatch({ origin: url, path: '/', method: 'GET', headers: [] },
      res.handler((r) => resolve({ res: r, status: r.statusCode, link: r.headers.link }), reject));
  });
  const body: Buffer[] = [];
  for await (const chunk of started.res) body.push(chunk as Buffer);
  t.equal(started.status, 200, 'started with the final status');
  t.equal(started.link, undefined, 'the hints\' headers are not the response\'s');
  t.equal(Buffer.concat(body).toString(), 'final');
});

t.test('a reader that falls behind: undici waits for it, and the body arrives whole and in order', async (t) => {
  const SIZE = 8 * 1024 * 1024;
  let written = 0;
  let blocked = false;
  const url = await rawServer(t, (s) => {
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${SIZE}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024);
    const more = () => {
      while (written < SIZE) {
        chunk.fill(written / chunk.length % 251);
        written += chunk.length;
        if (!s.write(chunk)) { blocked = true; s.once('drain', more); return; }
      }
      s.end();
    };
    more();
  });
  const res = await send(url);
  res.pause();
  await sleep(300);
  t.ok(blocked, 'the upstream could not write on: the gateway stopped reading');
  t.ok(written < SIZE, `not all written while nobody read (${written} of ${SIZE})`);
  let got = 0;
  let inOrder = true;
  for await (const c of res) {
    const b = c as Buffer;
    for (let i = 0; i < b.length; i += 4096) if (b[i] !== Math.floor((got + i) / (64 * 1024)) % 251) inOrder = false;
    got += b.length;
    if (got % (1024 * 1024) < b.length) await sleep(5); // a slow reader
  }
  t.equal(got, SIZE, 'every byte');
  t.ok(inOrder, 'in order');
  t.equal(res.complete, true);
});

t.test('a body cut short: aborted and not complete; its error only to a reader listening for one', async (t) => {
  const url = await rawServer(t, (s) => { s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf'); setTimeout(() => s.destroy(), 20); });
  for (const listening of [false, true]) {
    const res = await send(url);
    let aborted = false;
    let error: Error | undefined;
    res.on('aborted', () => { aborted = true; });
    if (listening) res.on('error', (err) => { error = err; });
    res.resume();
    await new Promise((resolve) => res.once('close', resolve)); // (events.once would reject with the error)
    t.equal(aborted, true, 'aborted');
    t.equal(res.complete, false, 'not complete');
    if (listening) t.ok(error, 'the error reached the reader listening for it');
  }
});

t.test('a response destroyed by its reader hangs up on the upstream', async (t) => {
  let closed = false;
  const url = await rawServer(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nopen\r\n');
    s.once('close', () => { closed = true; });
  });
  const res = await send(url);
  res.destroy();
  for (let i = 0; i < 50 && !closed; i++) await sleep(10);
  t.ok(closed, 'the upstream connection was closed');
});

/** The body whole() gives (undefined: cut), or 'refused' when whole() said no. */
function taken(res: UpstreamResponse): Promise<string | undefined | 'refused'> {
  return new Promise((resolve) => {
    if (!res.whole((body) => resolve(body?.toString('latin1')))) resolve('refused');
  });
}

t.test('a whole body taken without reading the stream: arrived with its headers, or after, in one chunk or many', async (t) => {
  // With the headers (the same read of the socket); in parts that arrive after whole() is asked.
  const withHead = await rawServer(t, (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'));
  const res = await send(withHead);
  t.equal(await taken(res), 'hello');
  t.equal(res.readableFlowing, null, 'the stream was never read');
  const parts = await rawServer(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    setTimeout(() => s.write('3\r\nabc\r\n'), 10);
    setTimeout(() => s.write('4\r\ndefg\r\n0\r\n\r\n'), 30);
  });
  const later = await send(parts);
  t.equal(await taken(later), 'abcdefg', 'every part, in order');
  t.equal(later.complete, true);
  const empty = await rawServer(t, (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
  t.equal(await taken(await send(empty)), '', 'an empty body');
  // With a limit, as readAll: the chunk that crosses it is not kept, nor any after it.
  const limited = await send(parts);
  const kept = await new Promise<string | undefined>((resolve) => limited.whole((body) => resolve(body?.toString()), 5));
  t.equal(kept, 'abc', 'past the limit nothing more is kept');
});

t.test('whole(): a body cut short gives nothing; a response read as a stream already is not taken', async (t) => {
  const cut = await rawServer(t, (s) => { s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf'); setTimeout(() => s.destroy(), 20); });
  const res = await send(cut);
  let aborted = false;
  res.on('aborted', () => { aborted = true; });
  t.equal(await taken(res), undefined, 'cut: no body');
  t.ok(aborted, 'and aborted, as for a stream reader');
  const url = await rawServer(t, (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'));
  const read = await send(url);
  const chunks: Buffer[] = [];
  read.on('data', (c: Buffer) => chunks.push(c));
  t.equal(await taken(read), 'refused', 'flowing already: whole() says no');
  await new Promise((resolve) => read.once('end', resolve));
  t.equal(Buffer.concat(chunks).toString(), 'hello', 'the stream reader gets the body, held chunks first');
  const twice = await send(url);
  t.equal(await taken(twice), 'hello');
  t.equal(await taken(twice), 'refused', 'once only');
});

t.test('whole(): a response destroyed while its body is awaited hangs up on the upstream and gives nothing', async (t) => {
  let closed = false;
  const url = await rawServer(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nopen\r\n');
    s.once('close', () => { closed = true; });
  });
  const res = await send(url);
  const body = taken(res);
  res.destroy();
  t.equal(await body, undefined);
  for (let i = 0; i < 50 && !closed; i++) await sleep(10);
  t.ok(closed, 'the upstream connection was closed');
});
