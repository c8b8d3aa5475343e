// The upstream request as the proxy sends it (plugins/proxy/attempt.ts): the target's Host and path, the body once, the
// client's credential never; a client that leaves before the answer hangs up on the upstream; a connection still being
// made gives up after connect_timeout_ms.
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { connectWithin } from '../../plugins/proxy/attempt.ts';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
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
  // A path prefix on the base URL, and a header the client may pass.
  platform: `{ base_url: "${upstream.url}/prefix", format: openai-chat, forward_headers: [x-hold] }`,
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

/** A socket as connectWithin sees one: still connecting, or not. */
class FakeSocket extends EventEmitter {
  connecting: boolean;
  destroyedWith?: Error & { code?: string };
  constructor(connecting: boolean) { super(); this.connecting = connecting; }
  destroy(err?: Error) { this.destroyedWith = err ?? new Error('destroyed'); this.emit('close'); return this; }
}

t.test('connect timeout: a connection still being made after the limit fails as ECONNECT_TIMEOUT', async (t) => {
  const slow = new FakeSocket(true);
  connectWithin(slow as unknown as Socket, 30);
  await sleep(80);
  t.equal(slow.destroyedWith?.code, 'ECONNECT_TIMEOUT');
  t.equal(slow.listenerCount('connect') + slow.listenerCount('error') + slow.listenerCount('close'), 0, 'its listeners are gone');

  const quick = new FakeSocket(true);
  connectWithin(quick as unknown as Socket, 30);
  quick.connecting = false;
  quick.emit('connect');
  await sleep(80);
  t.equal(quick.destroyedWith, undefined, 'connected in time: left alone');
  t.equal(quick.listenerCount('connect') + quick.listenerCount('close'), 0, 'its listeners are gone');

  const reused = new FakeSocket(false);
  connectWithin(reused as unknown as Socket, 1);
  await sleep(20);
  t.equal(reused.destroyedWith, undefined, 'a pooled connection (already connected) has no connect timer');
  t.equal(reused.listenerCount('connect'), 0);
});
