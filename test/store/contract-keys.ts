// Contract: issued keys (CRUD, re-issue under a new hash, change notices).
import type { Store } from '../../core/store/types.ts';
import { callCounter, issued, open, type MakeStore, type Tap } from './fixtures.ts';

export function keysContract(t: Tap, make: MakeStore): void {
  t.test('issued keys: put, get, list, update, delete', async (t) => {
    const s = await open(t, make);
    const a = issued({ id: 'key-a', sha256: 'sha-a', created_at: 2, expires_at: 99, name: 'A', models: ['m1'] });
    const b = issued({ id: 'key-b', sha256: 'sha-b', created_at: 1 });
    await s.putKey(a);
    await s.putKey(b);
    t.strictSame(await s.getKey('sha-a'), a);
    t.equal(await s.getKey('nope'), undefined);
    t.strictSame((await s.listKeys()).map((k) => k.id), ['key-b', 'key-a'], 'oldest first');

    t.equal(await s.updateKey('key-a', { disabled: true, limits: { rpm: 1, quota_usd: 5 } }), true);
    t.strictSame(await s.getKey('sha-a'), { ...a, disabled: true, limits: { rpm: 1, quota_usd: 5 } }, 'limits replaced, not merged');
    t.equal(await s.updateKey('key-a', { expires_at: undefined }), true);
    t.equal((await s.getKey('sha-a'))?.expires_at, undefined, 'a field patched to undefined is cleared');
    t.equal(await s.updateKey('missing', { disabled: true }), false);

    const got = await s.getKey('sha-b');
    got!.pools.push('mutated');
    t.strictSame((await s.getKey('sha-b'))?.pools, ['p1'], 'callers cannot mutate stored keys');

    t.equal(await s.deleteKey('key-a'), true);
    t.equal(await s.deleteKey('key-a'), false);
    t.equal(await s.getKey('sha-a'), undefined);
    t.strictSame((await s.listKeys()).map((k) => k.id), ['key-b']);
  });

  t.test('issued keys: putting a known id under a new hash replaces the old hash', async (t) => {
    const s = await open(t, make);
    await s.putKey(issued({ id: 'key-r', sha256: 'old' }));
    await s.putKey(issued({ id: 'key-r', sha256: 'new' }));
    t.equal(await s.getKey('old'), undefined);
    t.equal((await s.getKey('new'))?.id, 'key-r');
    t.equal((await s.listKeys()).length, 1);
    t.equal(await s.deleteKey('key-r'), true);
    t.strictSame(await s.listKeys(), []);
  });

  t.test('onKeysChanged: every change is announced', async (t) => {
    const s: Store = await open(t, make);
    const c = callCounter();
    await s.onKeysChanged(c.listener);
    await s.putKey(issued({ id: 'key-n', sha256: 'sha-n' }));
    await c.until(1);
    await s.updateKey('key-n', { disabled: true });
    await c.until(2);
    t.equal(await s.updateKey('nobody', { disabled: true }), false);
    await s.deleteKey('key-n');
    await c.until(3);
    t.equal(c.count(), 3, 'no notice for a change that did not happen');
  });
}
