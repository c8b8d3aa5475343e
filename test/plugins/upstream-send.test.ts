// The upstream request as the proxy sends it (plugins/proxy/attempt.ts): the target's Host and path, the body once, the
// client's credential never; a client that leaves before the answer hangs up on the upstream; a connection still being
// made gives up after connect_timeout_ms.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Tap } from '../store/fixtures.ts';
import { pino } from 'pino';
import { startGateway } from '../../app/gateway.ts';
import { chatConfig, withGateway, writeConfig } from '../helpers/gateway.ts';
import { bearer, chatBody, post } from '../helpers/http.ts';
import { startUpstream } from '../helpers/upstream.ts';

const answer = JSON.stringify({
  id: 'chatcmpl-send', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

const upstream = await startUpstream(t, async (req, res) => {
  if (req.headers['x-hold'] === 'yes') return; // never answers: the client gives up first
  res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
});

const gw = await withGateway(t, chatConfig({
  keyId: 'send', key: 'sk-send-0001',
  // A path prefix on the base URL, and a header the client may pass; the hop-by-hop ones a careless list would let by.
  platform: `{ base_url: "${upstream.url}/prefix", format: openai-chat, forward_headers: [x-hold, x-keep, te, trailer, keep-alive, expect] }`,
}));

t.test('the upstream gets the target\'s Host and path, the body, the account\'s credential and not the client\'s', async (t) => {
  const body = chatBody('gpt-4o-mini', 'hello');
  const res = await post(gw.url + '/v1/chat/completions', body, bearer('sk-send-0001'));
  t.equal(res.status, 200);
  t.equal((await res.json() as { id: string }).id, 'chatcmpl-send');
  const seen = upstream.exchanges.at(-1)!;
  t.equal(seen.method, 'POST');
  t.equal(seen.url, '/prefix/v1/chat/completions');
  t.equal(seen.headers.host, new URL(upstream.url).host);
  t.equal(seen.headers.authorization, 'Bearer upstream-credential-1');
  t.equal(seen.headers['content-length'], String(Buffer.byteLength(seen.body)));
  t.equal(seen.headers.connection, 'keep-alive', 'the pooled connection is kept');
  t.equal(seen.headers['transfer-encoding'], undefined, 'a sized body, not chunked');
  t.equal(seen.headers['content-type'], 'application/json');
  t.same(JSON.parse(seen.body).messages, [{ role: 'user', content: 'hello' }]);
});

t.test('hop-by-hop headers stay on the client\'s hop, even when a platform\'s list names them', async (t) => {
  // node:http, not fetch: fetch will not send these.
  const status = await new Promise<number>((resolve, reject) => {
    const req = request(gw.url + '/v1/chat/completions', {
      method: 'POST',
      headers: { ...bearer('sk-send-0001'), 'content-type': 'application/json', te: 'trailers', trailer: 'x-checksum', 'keep-alive': 'timeout=5', 'x-keep': 'yes' },
    }, (res) => { res.resume(); resolve(res.statusCode!); });
    req.on('error', reject);
    req.end(JSON.stringify(chatBody('gpt-4o-mini', 'hello')));
  });
  t.equal(status, 200);
  const seen = upstream.exchanges.at(-1)!;
  t.equal(seen.headers['x-keep'], 'yes', 'a listed header crosses');
  for (const name of ['te', 'trailer', 'keep-alive', 'expect']) t.equal(seen.headers[name], undefined, `${name} does not`);
});

t.test('a client that leaves before the answer: the upstream request is closed too', async (t) => {
  const before = upstream.exchanges.length;
  const abort = new AbortController();
  const sent = post(gw.url + '/v1/chat/completions', chatBody(), { ...bearer('sk-send-0001'), 'x-hold': 'yes' }, abort.signal).catch((err: Error) => err);
  for (let i = 0; i < 100 && upstream.exchanges.length === before; i++) await sleep(10);
  const seen = upstream.exchanges.at(-1)!;
  t.equal(upstream.exchanges.length, before + 1, 'the request reached the upstream');
  abort.abort();
  t.ok((await sent) instanceof Error, 'the client gave up');
  const closed = await Promise.race([seen.closed.then(() => true), sleep(2000).then(() => false)]);
  t.ok(closed, 'the upstream saw its request closed');
  t.equal(seen.finished, false, 'unanswered');
});

/**
 * An upstream whose connections never complete: a server process stopped (SIGSTOP) once its accept queue (backlog 1)
 * is full, so the kernel leaves every further connection attempt unanswered.
 */
async function unconnectable(t: Tap): Promise<string> {
  const child = spawn(process.execPath, ['-e', "require('net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, function () { console.log(this.address().port) })"],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => { child.kill('SIGKILL'); });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d)))));
  child.kill('SIGSTOP');
  const held: Socket[] = [];
  t.teardown(() => { for (const s of held) s.destroy(); });
  // Fill the queue; the next connection attempt hangs.
  for (;;) {
    const s = connect(port, '127.0.0.1');
    held.push(s);
    const connected = await Promise.race([once(s, 'connect').then(() => true), sleep(200).then(() => false)]);
    if (!connected) break;
  }
  return `http://127.0.0.1:${port}`;
}

t.test('connect timeout: a connection still being made after connect_timeout_ms fails the attempt as ECONNECT_TIMEOUT', async (t) => {
  const url = await unconnectable(t);
  const lines: string[] = [];
  const gw = await startGateway({
    configFile: writeConfig(chatConfig({
      keyId: 'slow', key: 'sk-slow-0001', platform: `{ base_url: "${url}", format: openai-chat }`,
      chain: 'auth, group-check, model-allowlist, { proxy: { connect_timeout_ms: 150, header_timeout_ms: 5000 } }',
    })),
    host: '127.0.0.1', port: 0, env: {}, log: pino({ level: 'warn' }, { write: (line: string) => { lines.push(line); } }),
  });
  t.teardown(() => gw.close());
  const started = Date.now();
  const res = await post(gw.url + '/v1/chat/completions', chatBody('gpt-4o-mini', 'hello'), bearer('sk-slow-0001'));
  const took = Date.now() - started;
  t.ok(res.status >= 500, `an upstream failure answers (${res.status})`);
  t.ok(took >= 140 && took < 2000, `after the connect timeout, well before the header timeout (${took} ms)`);
  t.match(lines.join('\n'), /ECONNECT_TIMEOUT/, 'logged as a connect timeout');
});
