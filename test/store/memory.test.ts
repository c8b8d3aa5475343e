// The Store contract on MemoryStore, plus what only the embedded store promises (no timers, createStore, lazy expiry).
import { pino } from 'pino';
import t from 'tap';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { createStore } from '../../core/store/index.ts';
import { ACCOUNT_IDLE_MS } from '../../core/store/rules/accounts.ts';
import { contract } from './contract.ts';
import { T0 } from './fixtures.ts';

contract(t, async (options) => new MemoryStore(options));

t.test('createStore without a Redis URL is the memory store', async (t) => {
  const s = await createStore({ redis: '' }, pino({ level: 'silent' }));
  t.equal(s.kind, 'memory');
  await s.close();
});

t.test('accounts: an account idle for ACCOUNT_IDLE_MS is forgotten, as its Redis keys expire', async (t) => {
  const s = new MemoryStore();
  t.teardown(() => s.close());
  const c = [{ id: 'a', priority: 1, weight: 1, concurrency: 2 }];
  const r = await s.acquireAccount({ group: 'g', requestId: 'x', now: T0, candidates: c, leaseMs: 1000 });
  if (r.ok) await s.releaseAccount(r.lease);
  await s.cooldown('g', 'a', T0 + 1000, 'overloaded');
  t.strictSame(await s.accountStates('g', ['a'], T0 + 1000 + ACCOUNT_IDLE_MS - 1), [{ id: 'a', inFlight: 0, probing: true, lastUsed: T0 }]);
  t.strictSame(await s.accountStates('g', ['a'], T0 + 1000 + ACCOUNT_IDLE_MS), [{ id: 'a', inFlight: 0, probing: false }]);
});

t.test('accounts: expired bindings are swept once their number doubles', async (t) => {
  const s = new MemoryStore();
  t.teardown(() => s.close());
  for (let i = 0; i < 1000; i++) await s.bind('g', 'pin', `old-${i}`, 'a', 1);
  await new Promise((r) => setTimeout(r, 5));
  for (let i = 0; i < 30; i++) await s.bind('g', 'pin', `new-${i}`, 'a', 60_000);
  const size = (s as unknown as { accounts: { bindings: Map<string, unknown> } }).accounts.bindings.size;
  t.equal(size, 30, 'only the live ones are left');
  t.equal(await s.bound('g', 'pin', 'new-29'), 'a');
});
