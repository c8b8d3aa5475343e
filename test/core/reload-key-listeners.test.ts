// Reloads and issued-key change notices: the store keeps one listener however often the config is reloaded, and a key
// change still clears the auth cache of the running config (memory store and Redis).
import t, { type Test } from 'tap';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { RedisStore } from '../../core/store/redis/store.ts';
import type { Gateway } from '../../app/gateway.ts';
import { KeyChanges } from '../../core/key-changes.ts';
import { withGateway } from '../helpers/gateway.ts';
import { admin, adminConfig, chat, eventually, issue } from '../admin/helpers.ts';
import { redisForTest } from '../store/redis-server.ts';

const RELOADS = 25;

/** Counts the listeners handed to a store class while a test runs. */
function countSubscriptions(t: Test, proto: { onKeysChanged(listener: () => void): void | Promise<void> }): () => number {
  const original = proto.onKeysChanged;
  let count = 0;
  proto.onKeysChanged = function (this: unknown, listener: () => void) { count++; return original.call(this, listener); };
  t.teardown(() => { proto.onKeysChanged = original; });
  return () => count;
}

/** Issue a key, cache it, reload many times, then revoke it: the running config must refuse it well before its cache ends
 * (withinMs 0: on the very next request). */
async function revokeAfterReloads(t: Test, gw: Gateway, subscriptions: () => number, withinMs: number): Promise<void> {
  const { key, record } = await issue(gw, { group: 'main', name: 'reloaded' });
  t.equal(await chat(gw, key), 200, 'an issued key is served (and now cached for 600 s)');
  t.equal(subscriptions(), 1, 'one store listener after the first load');
  for (let i = 0; i < RELOADS; i++) t.strictSame(await gw.reload(), [], `reload ${i + 1}`);
  t.equal(subscriptions(), 1, `still one store listener after ${RELOADS} reloads (each load creates its auth stages again)`);
  t.equal(await chat(gw, key), 200, 'the key is served by the reloaded config');

  t.equal((await admin(gw, 'PATCH', `/admin/keys/${record.id}`, { disabled: true })).status, 200);
  const started = Date.now();
  t.equal(await eventually(() => chat(gw, key), (s) => s === 401, withinMs), 401, 'the revoked key is refused by the running config');
  if (withinMs > 0) t.ok(Date.now() - started <= withinMs, `within ${Date.now() - started} ms, far below the 600 s cache`);
  t.equal((await admin(gw, 'PATCH', `/admin/keys/${record.id}`, { disabled: false })).status, 200);
  t.equal(await eventually(() => chat(gw, key), (s) => s === 200, withinMs), 200, 'enabled again: served again');
  t.equal(subscriptions(), 1, 'the changes added no listener');
}

t.test('KeyChanges: one store subscription, and only the running set hears changes', async (t) => {
  const store = new MemoryStore();
  const subscriptions = countSubscriptions(t, MemoryStore.prototype);
  const log = { error: () => {} } as unknown as ConstructorParameters<typeof KeyChanges>[1];
  const changes = new KeyChanges(store, log);
  const heard: string[] = [];
  const first = changes.listeners();
  first.add(() => heard.push('first-a'));
  first.add(() => heard.push('first-b'));
  t.equal(subscriptions(), 1, 'subscribed when a first listener was added');
  const change = async (id: string) => {
    await store.putKey({ id, sha256: `sha-${id}`, group: 'main', pools: [], limits: {}, disabled: false, created_at: 0 });
    await new Promise((resolve) => setImmediate(resolve)); // notices are delivered asynchronously
  };
  await change('k0');
  t.strictSame(heard, [], 'a set that never ran hears nothing');
  first.run();
  await change('k1');
  t.strictSame(heard.splice(0), ['first-a', 'first-b']);
  const second = changes.listeners();
  second.add(() => heard.push('second'));
  await change('k2');
  t.strictSame(heard.splice(0), ['first-a', 'first-b'], 'the running set still hears changes while the next one loads');
  second.run();
  await change('k3');
  t.strictSame(heard.splice(0), ['second'], 'once the next set runs, the old one is dropped');
  t.equal(subscriptions(), 1, 'and the store still has one listener');
});

t.test('memory store: reloads add no listener; a change clears the live cache', async (t) => {
  const subscriptions = countSubscriptions(t, MemoryStore.prototype);
  const gw = await withGateway(t, adminConfig({ authCacheMs: 600_000 }));
  await revokeAfterReloads(t, gw, subscriptions, 0);
});

t.test('redis store: reloads add no listener; a change clears the live cache', async (t) => {
  const { url, prefix } = await redisForTest(t, 'reload');
  const subscriptions = countSubscriptions(t, RedisStore.prototype);
  const gw = await withGateway(t, adminConfig({ store: `store: { redis: "${url}", prefix: "${prefix}" }`, authCacheMs: 600_000 }));
  await revokeAfterReloads(t, gw, subscriptions, 1000);
});
