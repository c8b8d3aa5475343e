// A group's candidates for a model (plugins/proxy/schedule.ts candidatesFor) are computed once per group object and
// model, not per request: the same list comes back, a reloaded config's group (a new object) gets its own, what a
// group keeps stays bounded however many model names reach it and however long, and what the store is told of each
// candidate (Scheduler) holds its scheduling numbers only, never its credential.
import t from 'tap';
import { MemoryStore } from '../../core/store/memory/store.ts';
import type { AcquireAccountRequest } from '../../core/store/types.ts';
import type { AccountConfig, Ctx, GroupConfig } from '../../core/types.ts';
import { candidatesFor, Scheduler } from '../../plugins/proxy/schedule.ts';
import type { PoolMetrics } from '../../plugins/proxy/pool-metrics.ts';

const account = (id: string, more: Partial<AccountConfig> = {}): AccountConfig =>
  ({ id, enabled: true, priority: 1, weight: 1, concurrency: 4, credential: `secret-${id}`, ...more } as unknown as AccountConfig);
const groupOf = (accounts: AccountConfig[]): GroupConfig => ({ name: 'g', accounts } as unknown as GroupConfig);

t.test('one list per group and model: the same list each time, by the accounts\' models and model_map', async (t) => {
  const group = groupOf([
    account('any'),
    account('claude-only', { models: ['claude-*'] }),
    account('mapped', { models: ['nothing'], model_map: { 'gpt-4o': 'gpt-4o-2024' } }),
    account('off', { enabled: false }),
  ]);
  const gpt = candidatesFor(group, 'gpt-4o');
  t.strictSame(gpt.map((a) => a.id), ['any', 'mapped']);
  t.equal(candidatesFor(group, 'gpt-4o'), gpt, 'the same list the second time');
  t.strictSame(candidatesFor(group, 'claude-3').map((a) => a.id), ['any', 'claude-only']);
  t.strictSame(candidatesFor(group, undefined).map((a) => a.id), ['any', 'claude-only', 'mapped'], 'no model: every enabled account');
  t.equal(candidatesFor(group, 'gpt-4o'), gpt, 'other models did not replace it');
});

t.test('a reloaded group is a new object: its own lists, from its own accounts', async (t) => {
  const before = groupOf([account('a'), account('b')]);
  const after = groupOf([account('a'), account('b', { enabled: false })]);
  t.strictSame(candidatesFor(before, 'm').map((a) => a.id), ['a', 'b']);
  t.strictSame(candidatesFor(after, 'm').map((a) => a.id), ['a'], 'the disabled account is gone from the new config\'s list');
  t.strictSame(candidatesFor(before, 'm').map((a) => a.id), ['a', 'b'], 'the old group keeps its own');
});

t.test('a group\'s lists stay bounded whatever model names reach it', async (t) => {
  const group = groupOf([account('a', { models: ['m-*'] })]);
  const first = candidatesFor(group, 'm-0');
  for (let i = 1; i < 256; i++) candidatesFor(group, `m-${i}`);
  t.equal(candidatesFor(group, 'm-0'), first, 'within the bound a list is kept');
  for (let i = 256; i < 300; i++) candidatesFor(group, `m-${i}`);
  const again = candidatesFor(group, 'm-0');
  t.not(again, first, 'past the bound the lists start again');
  t.strictSame(again.map((a) => a.id), ['a'], 'with the same answer');
  const long = `m-${'x'.repeat(300)}`;
  const once = candidatesFor(group, long);
  t.strictSame(once.map((a) => a.id), ['a'], 'a model name past 256 characters gets its answer');
  t.not(candidatesFor(group, long), once, 'but is not kept (a client\'s name: it could be a megabyte long)');
  t.equal(candidatesFor(group, 'm-0'), again, 'and leaves the kept lists alone');
});

t.test('the store is told each candidate\'s numbers only, the same list for the same candidates', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const asked: AcquireAccountRequest[] = [];
  const acquireAccount = store.acquireAccount.bind(store);
  store.acquireAccount = (req) => { asked.push(req); return acquireAccount(req); };
  const metrics = { queueWait: { observe: () => {} }, selections: { inc: () => {} } } as unknown as PoolMetrics;
  const scheduler = new Scheduler(store, { lease_ms: 60_000, heartbeat_ms: 10_000, queue_timeout_ms: 2000, queue_size: 10 }, metrics);
  const group = groupOf([account('x'), account('y')]);
  const candidates = candidatesFor(group, 'm');
  const ctx = (id: string) => ({ id, res: { once() {}, off() {} } }) as unknown as Ctx;
  for (const id of ['r1', 'r2']) {
    const got = await scheduler.acquire(ctx(id), { group, candidates }, 0);
    t.ok(got?.ok, `${id} took a slot`);
    if (got?.ok) await scheduler.release(got.lease);
  }
  t.equal(asked.length, 2);
  t.strictSame(asked[0].candidates, [
    { id: 'x', priority: 1, weight: 1, concurrency: 4 },
    { id: 'y', priority: 1, weight: 1, concurrency: 4 },
  ], 'id, priority, weight and concurrency: nothing else');
  t.notMatch(JSON.stringify(asked), /secret-/, 'no credential in what the store was asked');
  t.equal(asked[1].candidates, asked[0].candidates, 'mapped once for the list');
  t.strictSame(asked.map((r) => r.requestId), ['r1#0', 'r2#0']);
  t.notOk('prefer' in asked[0] || 'only' in asked[0] || 'bound' in asked[0], 'no preference asked for: none sent');
  const pinned = await scheduler.acquire(ctx('r3'), { group, candidates, prefer: 'y', only: true, bound: [{ kind: 'pin', name: 'obj' }] }, 1);
  t.ok(pinned?.ok);
  t.match(asked[2], { requestId: 'r3#1', prefer: 'y', only: true, bound: [{ kind: 'pin', name: 'obj' }] }, 'a preference and bindings are sent');
  if (pinned?.ok) await scheduler.release(pinned.lease);
});
