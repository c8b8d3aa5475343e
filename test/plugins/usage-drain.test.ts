// plugins/proxy/usage-drain.ts: which streams a client left are read on for their usage, and the bounds of that read:
// time, bytes and the gateway's shutdown each cut the upstream; once it ended, none of them touches it any more.
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { drainWanted, UsageDrain, type DrainBounds } from '../../plugins/proxy/usage-drain.ts';
import type { UpstreamResponse } from '../../plugins/proxy/upstream-response.ts';

const upstream = () => new PassThrough() as unknown as UpstreamResponse;
const usage = (input: number) => ({ input, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 });
const bounds: DrainBounds = { ms: 1000, bytes: 1000 };

t.test('read on only while the prompt is unreported, drains are on and the gateway is not shutting down', async (t) => {
  t.equal(drainWanted(undefined, bounds), true, 'no usage yet');
  t.equal(drainWanted(usage(0), bounds), true, 'usage without the prompt');
  t.equal(drainWanted(usage(17), bounds), false, 'the prompt is counted already: hang up');
  t.equal(drainWanted(undefined, undefined), false, 'no bounds given (a relay that bills nothing)');
  t.equal(drainWanted(undefined, { ms: 0, bytes: 1000 }), false, 'usage_drain_ms 0');
  t.equal(drainWanted(undefined, { ms: 1000, bytes: 0 }), false, 'usage_drain_bytes 0');
  t.equal(drainWanted(undefined, { ...bounds, signal: AbortSignal.abort() }), false, 'shutting down');
});

t.test('the time bound cuts the upstream', async (t) => {
  const up = upstream();
  let ended = 0;
  new UsageDrain(up, { ms: 50, bytes: 1000 }, () => ended++);
  await sleep(20);
  t.notOk(up.destroyed, 'read on within the bound');
  await sleep(60);
  t.ok(up.destroyed, 'cut once it passed');
  t.equal(ended, 0, 'ended only by the relay, when the upstream closes');
});

t.test('the byte bound cuts the upstream at the chunk that passes it', async (t) => {
  const up = upstream();
  const drain = new UsageDrain(up, { ms: 10_000, bytes: 100 }, () => {});
  t.equal(drain.take(Buffer.alloc(60)), true);
  t.equal(drain.take(Buffer.alloc(40)), true, 'exactly the bound');
  t.notOk(up.destroyed);
  t.equal(drain.take(Buffer.alloc(1)), false, 'one byte more');
  t.ok(up.destroyed, 'cut');
  drain.end();
});

t.test('a shutdown cuts it; once ended, neither the timer nor a shutdown touches the upstream', async (t) => {
  const closing = new AbortController();
  const up = upstream();
  new UsageDrain(up, { ...bounds, signal: closing.signal }, () => {});
  closing.abort();
  t.ok(up.destroyed, 'cut at the shutdown');

  const later = new AbortController();
  const done = upstream();
  let ended = 0;
  const drain = new UsageDrain(done, { ms: 30, bytes: 1000, signal: later.signal }, () => ended++);
  drain.end();
  t.equal(ended, 1, 'end() lets the relay resolve');
  later.abort();
  await sleep(50);
  t.notOk(done.destroyed, 'no cut after the end');
});
