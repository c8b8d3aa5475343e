// The proxy's Scheduler on its own (plugins/proxy/schedule.ts): an in-process store, a stand-in request and metrics, no
// gateway and no upstream. A slot is taken and given back; a full group queues (bounded in size and time), a released
// slot goes to the waiter, a client that leaves stops waiting; a failed admission sent alongside gives the slot back.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { MemoryStore } from '../../core/store/memory/store.ts';
import type { AccountConfig, Ctx, GroupConfig } from '../../core/types.ts';
import { Scheduler, type ScheduleOptions } from '../../plugins/proxy/schedule.ts';
import type { PoolMetrics } from '../../plugins/proxy/pool-metrics.ts';

const account = (id: string, concurrency = 1): AccountConfig =>
  ({ id, enabled: true, priority: 1, weight: 1, concurrency } as unknown as AccountConfig);

function setup(t: Tap, options: Partial<ScheduleOptions> = {}) {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const seen = { selections: [] as string[], waits: 0 };
  const metrics = {
    queueWait: { observe: () => { seen.waits++; } },
    selections: { inc: (l: { account: string }) => { seen.selections.push(l.account); } },
  } as unknown as PoolMetrics;
  const scheduler = new Scheduler(store, { lease_ms: 60_000, heartbeat_ms: 10_000, queue_timeout_ms: 2000, queue_size: 10, ...options }, metrics);
  const group = { name: 'g', accounts: [account('solo')] } as unknown as GroupConfig;
  let n = 0;
  const ctx = () => ({ id: `req-${++n}`, res: new EventEmitter() }) as unknown as Ctx & { res: EventEmitter };
  const inFlight = async () => (await store.accountStates('g', ['solo'], Date.now()))[0].inFlight;
  return { store, scheduler, group, ctx, seen, inFlight };
}
type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

t.test('a slot taken and given back; a waiter gets the slot a release frees', async (t) => {
  const { scheduler, group, ctx, seen, inFlight } = setup(t);
  const first = await scheduler.acquire(ctx(), { group, candidates: group.accounts }, 1);
  t.ok(first?.ok);
  if (!first?.ok) return;
  t.equal(await inFlight(), 1);
  const waited: number[] = [];
  const second = scheduler.acquire(ctx(), { group, candidates: group.accounts, waiting: (ms) => waited.push(ms) }, 1);
  await new Promise((r) => setTimeout(r, 20));
  await scheduler.release(first.lease, { succeededAt: Date.now() });
  const got = await second;
  t.ok(got?.ok, 'the waiter got the freed slot');
  t.ok(waited.length >= 1, 'and was told it waited');
  t.strictSame(seen.selections, ['solo', 'solo']);
  t.equal(seen.waits, 1, 'the wait was measured');
  if (got?.ok) await scheduler.release(got.lease);
  t.equal(await inFlight(), 0, 'every slot given back');
  await scheduler.release(first.lease);
  t.equal(await inFlight(), 0, 'a second release of the same lease is a no-op');
});

t.test('a full group: the queue is bounded in size and in time, with the catalogue\'s 429s', async (t) => {
  const { scheduler, group, ctx } = setup(t, { queue_size: 1, queue_timeout_ms: 150 });
  const held = await scheduler.acquire(ctx(), { group, candidates: group.accounts }, 1);
  t.ok(held?.ok);
  const waiting = scheduler.acquire(ctx(), { group, candidates: group.accounts }, 1).catch((e) => e);
  await new Promise((r) => setTimeout(r, 10));
  const full = await scheduler.acquire(ctx(), { group, candidates: group.accounts }, 1).catch((e) => e);
  t.match(full, { status: 429, code: 'ACCOUNTS_BUSY_QUEUE_FULL' }, 'a second waiter is turned away at once');
  const timedOut = await waiting;
  t.match(timedOut, { status: 429, code: 'ACCOUNTS_BUSY_TIMEOUT' }, 'the waiter gives up after queue_timeout_ms');
  t.match(timedOut.message, /stayed busy for 0\.2 s/);
});

t.test('a client that leaves while waiting stops waiting', async (t) => {
  const { scheduler, group, ctx } = setup(t);
  t.ok((await scheduler.acquire(ctx(), { group, candidates: group.accounts }, 1))?.ok);
  const leaving = ctx();
  const started = performance.now();
  const pending = scheduler.acquire(leaving, { group, candidates: group.accounts }, 1);
  setTimeout(() => leaving.res.emit('close'), 30);
  t.equal(await pending, undefined);
  t.ok(performance.now() - started < 1500, 'well before the queue timeout');
});

t.test('an admission sent alongside that fails: its error, and the slot the first try took is given back', async (t) => {
  const { scheduler, group, ctx, inFlight } = setup(t);
  const refused = Object.assign(new Error('rpm'), { status: 429 });
  const err = await scheduler.acquire(ctx(), { group, candidates: group.accounts }, 1, Promise.reject(refused)).catch((e) => e);
  t.equal(err, refused);
  await new Promise((r) => setTimeout(r, 10));
  t.equal(await inFlight(), 0);
});

t.test('a pinned request only takes its account; the store\'s refusal comes back as it is', async (t) => {
  const { scheduler, group, ctx } = setup(t);
  const two = { ...group, accounts: [account('solo'), account('other', 5)] } as GroupConfig;
  const pinned = await scheduler.acquire(ctx(), { group: two, candidates: two.accounts, prefer: 'other', only: true }, 1);
  t.equal(pinned?.ok && pinned.lease.account, 'other');
  const none = await scheduler.acquire(ctx(), { group: two, candidates: [] }, 1);
  t.match(none, { ok: false, reason: 'none' });
});
