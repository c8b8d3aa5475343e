// Heartbeats (plugins/heartbeats.ts): the leases held are renewed each beat, exactly those, whatever the order they
// leave in; a lease released twice is released once; the timer stops when none is held.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Heartbeats } from '../../plugins/heartbeats.ts';

t.test('renews exactly the leases held, through adds and deletes in any order', async (t) => {
  const renewed: number[] = [];
  const beats = new Heartbeats<{ n: number }>(30, async (lease) => { renewed.push(lease.n); });
  const leases = Array.from({ length: 40 }, (_, n) => ({ n }));
  for (const l of leases) beats.add(l);
  // Leave in a scrambled order: every third, then from the middle out.
  const gone = [...leases.filter((l) => l.n % 3 === 0), leases[20], leases[19], leases[22]];
  for (const l of gone) t.equal(beats.delete(l), true);
  t.equal(beats.delete(leases[0]), false, 'released twice: the second does nothing');
  t.equal(beats.delete({ n: 99 }), false, 'never held');
  renewed.length = 0;
  await sleep(45);
  const held = leases.filter((l) => !gone.includes(l)).map((l) => l.n);
  t.strictSame([...new Set(renewed)].sort((a, b) => a - b), held, 'one beat renewed each lease still held');
  for (const l of leases) beats.delete(l);
  renewed.length = 0;
  await sleep(70);
  t.strictSame(renewed, [], 'none held: no beat');
  beats.add(leases[5]);
  await sleep(45);
  t.ok(renewed.includes(5), 'held again: the timer runs again');
  beats.delete(leases[5]);
});
