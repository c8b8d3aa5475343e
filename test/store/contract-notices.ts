// Contract: what the notifier keeps in the store. A claim is won once while it lasts (on the real clock), then again;
// the delivery list keeps the newest texts first, a text noted again once, and no more than asked.
import { open, uid, type MakeStore, type Tap } from './fixtures.ts';

export function noticesContract(t: Tap, makeStore: MakeStore): void {
  t.test('notices: a claim is won once while it lasts; deliveries newest first, bounded', async (t) => {
    const s = await open(t, makeStore);
    const name = uid('key.quota:k:quota_usd:80');
    t.equal(await s.claim(name, 200), true, 'the first claim wins');
    t.equal(await s.claim(name, 200), false, 'a second loses');
    t.equal(await s.claim(uid('other'), 200), true, 'another name is its own');
    await new Promise((r) => setTimeout(r, 300));
    t.equal(await s.claim(name, 60_000), true, 'won again once it lapsed');
    t.equal(await s.claim(name, 60_000), false);
    const race = uid('race');
    const claims = await Promise.all(Array.from({ length: 20 }, () => s.claim(race, 60_000)));
    t.equal(claims.filter(Boolean).length, 1, 'of 20 claims made at once, one wins');

    t.same(await s.recentDeliveries(10), [], 'none yet');
    for (let i = 0; i < 5; i++) await s.noteDelivery(JSON.stringify({ n: i }), 3);
    t.same((await s.recentDeliveries(10)).map((x) => JSON.parse(x).n), [4, 3, 2], 'the newest 3, newest first');
    t.same((await s.recentDeliveries(2)).map((x) => JSON.parse(x).n), [4, 3], 'as many as asked');
    await s.noteDelivery(JSON.stringify({ n: 3 }), 3);
    t.same((await s.recentDeliveries(10)).map((x) => JSON.parse(x).n), [3, 4, 2], 'noted again: moved to the head, not doubled');
  });
}
