// The bench's completeness checks: a body judged whole against the check's answer, and requests autocannon lost
// without a word (a server closing a connection mid-answer) counted, against a server that cuts some streams.
import http from 'node:http';
import { EventEmitter } from 'node:events';
import t from 'tap';
import { connectionLedger, fire } from '../../bench/load.ts';
import { wholeLike } from '../../bench/request.ts';

const whole = 'data: {"content":"a"}\n\ndata: {"content":"b"}\n\ndata: [DONE]\n\n';

t.test('wholeLike: as long as the check\'s answer and ending as it does', async (t) => {
  const isWhole = wholeLike(whole);
  t.ok(isWhole(whole));
  t.notOk(isWhole(whole.slice(0, -1)), 'last byte missing');
  t.notOk(isWhole('data: {"content":"a"}\n\n'), 'cut after the first frame');
  t.notOk(isWhole('data: [DONE]\n\n'), 'ends alike but shorter');
});

t.test('connectionLedger: sent less settled, less the one in flight at the end', async (t) => {
  const ledger = connectionLedger();
  const [a, b] = [new EventEmitter(), new EventEmitter()];
  ledger.setupClient(a);
  ledger.setupClient(b);
  for (let i = 0; i < 5; i++) a.emit('request');
  a.emit('response'); a.emit('timeout'); a.emit('connError'); // 5 sent, 3 settled, 1 in flight: 1 lost
  b.emit('request'); b.emit('response'); // idle at the end
  t.equal(ledger.dropped(), 1);
});

t.test('a server that cuts every third stream: dropped or short, never all complete', async (t) => {
  let served = 0;
  const server = http.createServer((req, res) => {
    req.resume().on('end', () => {
      const cut = ++served % 3 === 0;
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: {"content":"a"}\n\n');
      setTimeout(() => (cut ? res.destroy() : res.end('data: {"content":"b"}\n\ndata: [DONE]\n\n')), 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { server.close(); });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  let ok = 0;
  let short = 0;
  const { run, dropped } = fire(url, { connections: 2, duration: 1, stream: true }, { check: whole }, (status, isWhole) => {
    if (status === 200 && isWhole) ok++;
    else short++;
  });
  const result = await run;
  t.ok(served >= 9, `served ${served}`);
  t.ok(dropped() + short + result.errors >= Math.floor(served / 3) - 2, `dropped ${dropped()}, short ${short}, errors ${result.errors} of ${Math.floor(served / 3)} cut`);
  t.ok(dropped() > 0, 'the cut connections show as dropped');
});
