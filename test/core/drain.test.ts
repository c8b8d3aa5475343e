// The server drain: connections without a response close at once, a response in progress is flushed whole first.
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import t from 'tap';
import { drainable } from '../../core/drain.ts';

async function listening(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  const drain = drainable(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, drain, port: (server.address() as AddressInfo).port };
}

const opened = (port: number) => new Promise<ReturnType<typeof connect>>((resolve) => {
  const socket = connect(port, '127.0.0.1', () => resolve(socket));
  socket.on('error', () => {});
});

t.test('a connection that never sent a byte and one between requests close at once', async (t) => {
  const { drain, port } = await listening((_req, res) => res.end('ok'));
  const unused = await opened(port);
  const kept = await opened(port);
  const closed = Promise.all([unused, kept].map((socket) => new Promise((resolve) => socket.once('close', resolve))));
  kept.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => kept.once('data', resolve));
  const start = performance.now();
  await drain.drain(5000);
  await closed;
  const ms = performance.now() - start;
  t.ok(ms < 1000, `drained in ${Math.round(ms)} ms`);
});

t.test('a response ended but not yet flushed to a slow reader reaches it whole before its connection closes', async (t) => {
  const big = Buffer.alloc(16 * 1024 * 1024, 97);
  let ended!: () => void;
  const endedNow = new Promise<void>((resolve) => { ended = resolve; });
  const { drain, port } = await listening((_req, res) => {
    res.writeHead(200, { 'content-length': big.length }).end(big);
    ended();
  });
  const client = await opened(port);
  client.pause();
  let received = 0;
  client.on('data', (chunk: Buffer) => { received += chunk.length; });
  const closed = new Promise((resolve) => client.once('close', resolve));
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await endedNow;
  const drained = drain.drain(5000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  client.resume();
  await closed;
  await drained;
  t.ok(received > big.length, `received ${received} bytes, the body is ${big.length}`);
});

t.test('a request in flight is answered; the answer says the connection closes', async (t) => {
  let answer!: () => void;
  const { drain, port } = await listening((_req, res) => { answer = () => res.end('late'); });
  const client = await opened(port);
  let text = '';
  client.on('data', (chunk: Buffer) => { text += chunk.toString(); });
  const closed = new Promise((resolve) => client.once('close', resolve));
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const drained = drain.drain(5000);
  t.equal(drain.draining, true);
  answer();
  await closed;
  await drained;
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(text, /\r\nConnection: close\r\n/i);
  t.match(text, /late$/);
  t.equal(drain.cut, false, 'nothing was cut');
});

t.test('a response still in progress at the timeout is cut, and the drain says so', async (t) => {
  const { drain, port } = await listening((_req, res) => { res.writeHead(200); res.write('partial'); });
  const client = await opened(port);
  const closed = new Promise((resolve) => client.once('close', resolve));
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => client.once('data', resolve));
  const drained = drain.drain(200);
  t.equal(drain.cut, false, 'not before the timeout');
  await closed;
  await drained;
  t.equal(drain.cut, true);
});
