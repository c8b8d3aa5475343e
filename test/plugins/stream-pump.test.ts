// plugins/proxy/stream-pump.ts: a client that reads slower than the upstream writes holds the upstream back (as pipe()
// does) rather than the stream piling up in the gateway's memory, and still gets every byte as the upstream sent it.
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { relay } from '../../plugins/proxy/relay.ts';
import type { Ctx } from '../../core/types.ts';
import { endingCtx } from '../helpers/stage-ctx.ts';

class Upstream extends PassThrough {
  statusCode = 200;
  headers = { 'content-type': 'text/event-stream' };
  complete = false;
}

const frame = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;

t.test('a client that does not read pauses the upstream; once it reads, every byte arrives as sent', async (t) => {
  const piece = 'x'.repeat(512 * 1024);
  const frames = [
    frame('message_start', { message: { id: 'm1', model: 'claude-haiku-4-5', usage: { input_tokens: 3, output_tokens: 1 } } }),
    ...Array.from({ length: 48 }, () => frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } })),
    frame('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
    frame('message_stop', {}),
  ];
  const sent = frames.join('');
  let upstream!: Upstream;
  let response!: ServerResponse;
  let ctx!: Ctx;
  let received!: (text: string) => void;
  const whole = new Promise<string>((resolve) => { received = resolve; });
  const relayed = new Promise<void>((resolve) => {
    const server = createServer((_req, res) => {
      response = res;
      ctx = endingCtx({ id: 'pump-1', res, format: anthropicMessages, get: () => undefined, stream: true, timings: { start: 0 } });
      upstream = new Upstream();
      void relay(ctx, upstream as never, 0).then(resolve);
      for (const f of frames) upstream.write(f);
      upstream.end();
    });
    server.listen(0, '127.0.0.1', () => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      t.teardown(() => { socket.destroy(); server.closeAllConnections(); server.close(); });
      socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
      socket.pause();
      void (async () => {
        for (let i = 0; i < 200 && !upstream?.isPaused(); i++) await sleep(10);
        await sleep(50);
        t.ok(upstream.isPaused(), 'the upstream waits for the client');
        t.ok(response.writableLength < 8 * 1024 * 1024, `the gateway holds little of it (${response.writableLength} bytes)`);
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('end', () => received(Buffer.concat(chunks).toString('utf8')));
        socket.resume();
      })();
    });
  });
  await relayed;
  const text = await whole;
  t.equal(dechunk(text.slice(text.indexOf('\r\n\r\n') + 4)), sent, 'byte for byte');
  t.equal(ctx.outcome, 'completed');
  t.equal(ctx.usage?.output, 9);
});

/** An HTTP/1.1 chunked body's content. */
function dechunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = parseInt(body.slice(at, eol), 16);
    if (!size) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
