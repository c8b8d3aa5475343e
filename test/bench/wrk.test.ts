// The bench's wrk driver (bench/wrk.ts): every answer counted and checked as with autocannon, against a server whose
// every third answer is whole but short of the check's, and every fifth a 500.
import http from 'node:http';
import { createHistogram } from 'node:perf_hooks';
import t from 'tap';
import { measureWrk, wrkInstalled } from '../../bench/wrk.ts';

const check = '{"object":"chat.completion","choices":[{"message":{"content":"hello there"}}]}';

t.test('wrk: ok, short and non-2xx answers counted; the window opened and closed around the measured run', { skip: wrkInstalled() ? false : 'wrk is not installed (Debian: apt-get install wrk)' }, async (t) => {
  let served = 0;
  const server = http.createServer((req, res) => {
    req.resume().on('end', () => {
      const n = ++served;
      if (n % 5 === 0) return res.writeHead(500).end('{"error":{}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(n % 3 === 0 ? check.slice(0, 20) + check.slice(-32) : check);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.close(); });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const seen: string[] = [];
  const latency = createHistogram();
  const f = await measureWrk(url, { connections: 2, duration: 1, warmup: 1, stream: false }, { check },
    { start: () => { seen.push(`start ${served}`); }, end: () => { seen.push(`end ${served}`); } }, latency);
  const inWindow = Number(seen[1].split(' ')[1]) - Number(seen[0].split(' ')[1]);
  t.ok(f.ok > 100, `${f.ok} answered 2xx`);
  t.ok(Math.abs(f.ok + f.non2xx - inWindow) <= 4, `every answer of the window counted: ${f.ok} + ${f.non2xx} of ${inWindow} served`);
  const third = (f.ok + f.non2xx) / 3;
  t.ok(f.short > third * 0.6 && f.short < third * 1.4, `the short ones found: ${f.short} of about ${Math.round(third * 0.8)}`);
  t.ok(f.non2xx > 0, `${f.non2xx} non-2xx`);
  t.equal(f.errors, 0);
  t.ok(latency.count > 0 && f.p50Ms > 0 && f.p99Ms >= f.p50Ms, `p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms`);
  await t.rejects(measureWrk(url, { connections: 1, duration: 1, warmup: 0, stream: true }, { check }, undefined, latency), /streamed runs/);
});
