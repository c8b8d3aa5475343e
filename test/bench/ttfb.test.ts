// The ttfb probe, against a server whose stream opens at once and sends its first content 30 ms later.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { openTtfbProbe } from '../../bench/ttfb.ts';

const opening = 'data: {"delta":{"role":"assistant","content":""}}\n\n';
const rest = 'data: {"delta":{"content":"hi"}}\n\ndata: [DONE]\n\n';

t.test('times the first byte and the first content of whole streams, and counts the rest as failed', async (t) => {
  let served = 0;
  const server = http.createServer((req, res) => {
    req.resume().on('end', () => {
      if (++served % 4 === 0) return void res.writeHead(503).end('busy');
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write(opening);
      setTimeout(() => res.end(rest), 30);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.close(); });
  const probe = await openTtfbProbe(`http://127.0.0.1:${(server.address() as { port: number }).port}`, { check: opening + rest });
  probe.start();
  await sleep(500);
  const f = await probe.stop();
  t.ok(f.n >= 15, `${f.n} timed`);
  t.equal(f.answered, f.n + f.failed, 'every probe answered');
  t.equal(f.failed, Math.floor(served / 4), 'the 503s failed');
  t.ok(f.p50Ms! < 25, `first byte p50 ${f.p50Ms} ms, before the content`);
  t.ok(f.contentP50Ms! >= 29, `first content p50 ${f.contentP50Ms} ms, after the 30 ms wait`);
});
