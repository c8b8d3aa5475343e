// The store guard (guard.ts) over a store that fails on demand: failed calls become 503 STORE_UNAVAILABLE, failed
// settlements are held in order and written once the store answers, the outbox is bounded, close() flushes it.
import { pino } from 'pino';
import t from 'tap';
import { GatewayError } from '../../core/errors.ts';
import { guardStore } from '../../core/store/guard.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import type { Store } from '../../core/store/types.ts';
import { T0, record } from './fixtures.ts';

const silent = pino({ level: 'silent' });

/** A memory store whose calls all fail while `down` is set, as a Redis that went away would. */
function flaky(): { store: Store; down: { value: boolean }; settled: string[] } {
  const inner = new MemoryStore();
  const down = { value: false };
  const settled: string[] = [];
  const store = new Proxy(inner, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (down.value && name !== 'close') return Promise.reject(new Error('Connection is closed.'));
        if (name === 'settle') settled.push((args[0] as { request_id: string }).request_id);
        return value.apply(target, args);
      };
    },
  });
  return { store, down, settled };
}

t.test('a failed call is the gateway\'s own 503, a failed settlement is held and written later, in order', async (t) => {
  const { store, down, settled } = flaky();
  const guarded = guardStore(store, silent);
  t.teardown(() => guarded.close());
  down.value = true;
  const err = await guarded.admit({ keyId: 'k', requestId: 'r0', now: T0, limits: { rpm: 1 }, estimatedTokens: 0, leaseMs: 1000 }).catch((e: unknown) => e);
  t.ok(err instanceof GatewayError);
  t.match(err, { status: 503, code: 'STORE_UNAVAILABLE', headers: { 'retry-after': '1' } });
  t.equal(guarded.available?.(), false, 'unavailable from the failed call');
  t.strictSame(await guarded.settle(record({ request_id: 'a', key_id: 'k', input_tokens: 5 }), undefined, {}), { recorded: false, held: true });
  t.strictSame(await guarded.settle(record({ request_id: 'b', key_id: 'k', input_tokens: 7 }), undefined, {}), { recorded: false, held: true });
  t.equal(guarded.pendingSettlements?.(), 2);
  down.value = false;
  await guarded.accountStates('g', ['x'], T0); // any answer: the held ones go now, not at the next retry
  for (let i = 0; i < 40 && guarded.pendingSettlements?.(); i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(guarded.pendingSettlements?.(), 0);
  t.equal(guarded.available?.(), true, 'available again once a call succeeded');
  t.strictSame(settled, ['a', 'b'], 'written in the order they were made');
  t.equal((await guarded.keyUsage('k', { days: 1, now: T0 })).total.input_tokens, 12, 'counted once each');
  t.strictSame(await guarded.settle(record({ request_id: 'c', key_id: 'k' }), undefined, {}), { recorded: true }, 'straight through again');
  down.value = true;
  await t.rejects(guarded.settle(record({ request_id: '', key_id: 'k' }), undefined, {}), /request_id is required/, 'a malformed record is refused, not held');
  t.equal(guarded.pendingSettlements?.(), 0);
});

t.test('the outbox is bounded: the oldest held settlement gives way', async (t) => {
  const { store, down } = flaky();
  const guarded = guardStore(store, silent, 3);
  down.value = true;
  for (const id of ['1', '2', '3', '4', '5']) await guarded.settle(record({ request_id: id, key_id: 'k' }), undefined, {});
  t.equal(guarded.pendingSettlements?.(), 3);
  down.value = false;
  await guarded.close(); // flushes what is held first
  const { records } = await store.records({ limit: 10 });
  t.strictSame(records.map((r) => r.request_id).sort(), ['3', '4', '5']);
});

t.test('logged store errors carry no command arguments (an AUTH error\'s would hold the Redis password)', async (t) => {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(line); } });
  const inner = new MemoryStore();
  const failing = new Proxy(inner, {
    get(target, name) {
      if (name !== 'admit') return Reflect.get(target, name);
      return () => Promise.reject(Object.assign(new Error('WRONGPASS invalid username-password pair'), { command: { name: 'auth', args: ['user', 'redis-secret-password'] } }));
    },
  });
  const guarded = guardStore(failing, log);
  await t.rejects(guarded.admit({ keyId: 'k', requestId: 'r', now: T0, limits: {}, estimatedTokens: 0, leaseMs: 1000 }), { code: 'STORE_UNAVAILABLE' });
  t.equal(lines.length, 1, 'logged once');
  t.match(lines[0], /WRONGPASS/, 'with what went wrong');
  t.notMatch(lines[0], /redis-secret-password/, 'without the password');
});
