// Contract: upstream account scheduling (priority, load, LRU, weights, prefer/only, cool-downs, probing, leases,
// bindings). Time moves only through `now`, except bindings, which expire on the real clock (Redis PX).
import type { AccountCandidate, AcquireAccountRequest, AcquireAccountResult, Store } from '../../core/store/types.ts';
import { T0, open, uid, type MakeStore, type Tap } from './fixtures.ts';

const acct = (id: string, over: Partial<AccountCandidate> = {}): AccountCandidate =>
  ({ id, priority: 1, weight: 1, concurrency: 1, ...over });

const req = (candidates: AccountCandidate[], now: number, over: Partial<AcquireAccountRequest> = {}): AcquireAccountRequest =>
  ({ group: 'g', requestId: uid('a'), now, candidates, leaseMs: 30_000, ...over });

/** The account taken, or the refusal reason (and retry) as a string, e.g. "cooling:2000". */
const show = (r: AcquireAccountResult): string =>
  r.ok ? r.lease.account : `${r.reason}${r.retryAfterMs === undefined ? '' : `:${r.retryAfterMs}`}`;

async function take(s: Store, candidates: AccountCandidate[], now: number, over: Partial<AcquireAccountRequest> = {}): Promise<string> {
  return show(await s.acquireAccount(req(candidates, now, over)));
}

/** Acquires and releases at once; the account chosen. */
async function touch(s: Store, candidates: AccountCandidate[], now: number): Promise<string> {
  const r = await s.acquireAccount(req(candidates, now));
  if (!r.ok) throw new Error(`refused: ${show(r)}`);
  await s.releaseAccount(r.lease);
  return r.lease.account;
}

/** A success at `at`, told the way the proxy tells it: with a slot going back (here one nobody holds). */
const succeeded = (s: Store, account: string, at: number) =>
  s.releaseAccount({ group: 'g', account, requestId: 'not-held' }, { succeededAt: at });

export function accountsContract(t: Tap, make: MakeStore): void {
  t.test('accounts: lowest priority number first, the next one when it is full', async (t) => {
    const s = await open(t, make);
    const c = [acct('low', { priority: 2 }), acct('high', { priority: 1 })];
    const first = await s.acquireAccount(req(c, T0, { requestId: 'first' }));
    t.strictSame(first, { ok: true, lease: { group: 'g', account: 'high', requestId: 'first' }, preferred: false });
    t.equal(await take(s, c, T0), 'low');
    t.equal(await take(s, c, T0), 'busy');
    if (first.ok) await s.releaseAccount(first.lease);
    t.equal(await take(s, c, T0), 'high', 'the released slot goes to the higher priority again');
    t.equal(await take(s, c, T0, { group: 'other' }), 'high', 'groups are separate');
  });

  t.test('accounts: lowest load (slots in use ÷ concurrency) among equal priority', async (t) => {
    const s = await open(t, make);
    const even = [acct('a', { concurrency: 2 }), acct('b', { concurrency: 2 })];
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await take(s, even, T0));
    t.strictSame(got.sort(), ['a', 'a', 'b', 'b'], 'four acquisitions spread 2/2');
    t.equal(await take(s, even, T0), 'busy');
    const uneven = [acct('big', { concurrency: 3 }), acct('small', { concurrency: 1 })];
    const spread = [];
    for (let i = 0; i < 4; i++) spread.push(await take(s, uneven, T0, { group: 'g2' }));
    t.strictSame(spread.sort(), ['big', 'big', 'big', 'small'], 'load is relative to concurrency');
    const states = await s.accountStates('g2', ['big', 'small'], T0);
    t.strictSame(states.map((x) => x.inFlight), [3, 1]);
  });

  t.test('accounts: least recently used among equal load, never used first', async (t) => {
    const s = await open(t, make);
    const c = [acct('a'), acct('b'), acct('c')];
    const firstRound = [await touch(s, c, T0), await touch(s, c, T0 + 1), await touch(s, c, T0 + 2)];
    t.strictSame([...firstRound].sort(), ['a', 'b', 'c'], 'each account once before any twice');
    t.equal(await touch(s, c, T0 + 3), firstRound[0], 'then the least recently used');
    t.equal(await touch(s, c, T0 + 4), firstRound[1]);
    const states = await s.accountStates('g', ['a', 'b', 'c'], T0 + 5);
    t.equal(states.find((x) => x.id === firstRound[2])?.lastUsed, T0 + 2);
    t.equal(states.find((x) => x.id === firstRound[0])?.lastUsed, T0 + 3);
  });

  // Among accounts of equal priority and load, weights are shares (stride scheduling): not a random draw, so the
  // count is exact up to the first picks and the rounding of strides.
  t.test('accounts: weights are shares among equal priority and load', async (t) => {
    const s = await open(t, make);
    const c = [acct('heavy', { weight: 3 }), acct('light', { weight: 1 })];
    await touch(s, c, T0);
    await touch(s, c, T0);
    let heavy = 0;
    for (let i = 0; i < 1000; i++) if ((await touch(s, c, T0)) === 'heavy') heavy++;
    t.ok(heavy >= 748 && heavy <= 752, `heavy chosen ${heavy} of 1000 times (3:1 is 750)`);
    const zero = [acct('never', { weight: 0 }), acct('always', { weight: 2 })];
    await touch(s, zero, T0 + 1);
    await touch(s, zero, T0 + 1);
    let never = 0;
    for (let i = 0; i < 50; i++) if ((await touch(s, zero, T0 + 1)) === 'never') never++;
    t.equal(never, 0, 'a zero weight is not chosen in a tie with a positive one');
  });

  t.test('accounts: prefer, and only (refusal reasons)', async (t) => {
    const s = await open(t, make);
    const c = [acct('a'), acct('b', { priority: 5 })];
    const p = await s.acquireAccount(req(c, T0, { prefer: 'b' }));
    t.ok(p.ok && p.lease.account === 'b' && p.preferred, 'a free preferred account is taken over a better one');
    const fb = await s.acquireAccount(req(c, T0, { prefer: 'b' }));
    t.ok(fb.ok && fb.lease.account === 'a' && !fb.preferred, 'a full preferred account falls back');
    t.equal(await take(s, c, T0, { prefer: 'b', only: true }), 'busy', 'only: the preferred account is full');
    await s.cooldown('g', 'b', T0 + 7000, 'overloaded');
    t.equal(await take(s, c, T0 + 1000, { prefer: 'b', only: true }), 'cooling:6000', 'only: cooling, with the wait');
    t.equal(await take(s, c, T0 + 1000, { prefer: 'gone', only: true }), 'none', 'only: not a candidate');
    t.equal(await take(s, c, T0 + 1000, { prefer: 'gone' }), 'busy', 'without only, an unknown preference is ignored');
    const q = await s.acquireAccount(req([acct('x'), acct('y')], T0, { prefer: 'y', group: 'g2' }));
    t.ok(q.ok && q.lease.account === 'y' && q.preferred);
    const r = await s.acquireAccount(req([acct('x'), acct('y')], T0, { prefer: 'y', only: false, group: 'g2' }));
    t.ok(r.ok && r.lease.account === 'x' && !r.preferred);
  });

  t.test('accounts: busy, cooling (soonest end) and none', async (t) => {
    const s = await open(t, make);
    t.equal(await take(s, [], T0), 'none');
    const c = [acct('a'), acct('b', { priority: 2 })];
    await s.cooldown('g', 'a', T0 + 5000, 'rate_limited');
    await s.cooldown('g', 'b', T0 + 2000, 'upstream_error');
    t.equal(await take(s, c, T0), 'cooling:2000', 'every candidate cooling: retry at the soonest end');
    t.equal(await take(s, c, T0 + 2000), 'b', 'b is back (as a probe) when its cool-down ends');
    t.equal(await take(s, c, T0 + 2000), 'busy', 'b probes one request at a time and a still cools: busy');
    t.equal(await take(s, c, T0 + 5000), 'a');
  });

  t.test('accounts: a cool-down ends by itself, then one probe at a time until a success', async (t) => {
    const s = await open(t, make);
    const c = [acct('a', { concurrency: 3 }), acct('b', { concurrency: 3, priority: 2 })];
    await s.cooldown('g', 'a', T0 + 60_000, 'rate_limited');
    t.strictSame(await s.accountStates('g', ['a'], T0 + 1000), [
      { id: 'a', inFlight: 0, coolingUntil: T0 + 60_000, reason: 'rate_limited', probing: true },
    ]);
    t.equal(await take(s, c, T0 + 1000), 'b', 'a cooling account is skipped');
    t.equal(await take(s, c, T0 + 59_999), 'b');
    const probe = await s.acquireAccount(req(c, T0 + 60_000));
    t.ok(probe.ok && probe.lease.account === 'a', 'back at the end of the cool-down, without any other call');
    t.equal(await take(s, c, T0 + 60_000), 'b', 'a probing account admits one request');
    t.equal(await take(s, c, T0 + 60_000, { prefer: 'a', only: true }), 'busy');
    const st = (await s.accountStates('g', ['a'], T0 + 60_000))[0];
    t.equal(st.coolingUntil, undefined);
    t.equal(st.probing, true);
    await succeeded(s, 'a', T0 + 60_000);
    t.equal((await s.accountStates('g', ['a'], T0 + 60_001))[0].probing, false, 'a success ends probing');
    const after = [await take(s, c, T0 + 60_001), await take(s, c, T0 + 60_001)];
    t.strictSame(after, ['a', 'a'], 'full concurrency again');
    t.equal(await take(s, c, T0 + 60_001), 'b', 'a is at 3');
  });

  t.test('accounts: a later cool-down end wins; a success during the cool-down does not end probing', async (t) => {
    const s = await open(t, make);
    await s.cooldown('g', 'a', T0 + 100_000, 'overloaded');
    await s.cooldown('g', 'a', T0 + 80_000, 'rate_limited');
    let st = (await s.accountStates('g', ['a'], T0))[0];
    t.equal(st.coolingUntil, T0 + 100_000);
    t.equal(st.reason, 'overloaded', 'the reason of the later end');
    await s.cooldown('g', 'a', T0 + 120_000, 'auth');
    st = (await s.accountStates('g', ['a'], T0))[0];
    t.strictSame([st.coolingUntil, st.reason], [T0 + 120_000, 'auth']);
    await succeeded(s, 'a', T0 + 50_000);
    t.equal((await s.accountStates('g', ['a'], T0 + 50_000))[0].probing, true, 'an older request finishing proves nothing');
    await succeeded(s, 'a', T0 + 120_000);
    st = (await s.accountStates('g', ['a'], T0 + 120_000))[0];
    t.strictSame(st, { id: 'a', inFlight: 0, probing: false }, 'after the end it does; nothing left to show');
    await succeeded(s, 'never-seen', T0);
    t.strictSame(await s.accountStates('g', ['never-seen'], T0), [{ id: 'never-seen', inFlight: 0, probing: false }]);
  });

  t.test('accounts: leases expire unless renewed (a crashed process); heartbeat keeps them', async (t) => {
    const s = await open(t, make);
    const c = [acct('a', { concurrency: 2 })];
    const live = await s.acquireAccount(req(c, T0, { leaseMs: 10_000 }));
    const crashed = await s.acquireAccount(req(c, T0, { leaseMs: 10_000 }));
    if (!live.ok || !crashed.ok) return t.fail('acquire');
    await s.heartbeatAccount(live.lease, 10_000, T0 + 8000); // now held until T0 + 18 s
    t.equal(await take(s, c, T0 + 9999), 'busy');
    t.equal((await s.accountStates('g', ['a'], T0 + 9999))[0].inFlight, 2);
    const next = await s.acquireAccount(req(c, T0 + 10_000, { leaseMs: 10_000 }));
    t.ok(next.ok, 'the crashed holder\'s lease expired');
    await s.heartbeatAccount(crashed.lease, 10_000, T0 + 12_000);
    t.equal((await s.accountStates('g', ['a'], T0 + 12_000))[0].inFlight, 2, 'heartbeat never revives an expired lease');
    t.equal(await take(s, c, T0 + 17_999), 'busy', 'the renewed lease still holds');
    t.equal(await take(s, c, T0 + 18_000), 'a', 'the renewal ran out at 18 s');
  });

  t.test('accounts: release is idempotent; a retried acquisition keeps its one slot', async (t) => {
    const s = await open(t, make);
    const c = [acct('a'), acct('b')];
    const r = req(c, T0);
    const first = await s.acquireAccount(r);
    const again = await s.acquireAccount({ ...r, now: T0 + 5 });
    if (!first.ok || !again.ok) return t.fail('acquire');
    t.equal(again.lease.account, first.lease.account, 'the same request id gets its lease back');
    t.strictSame((await s.accountStates('g', ['a', 'b'], T0 + 5)).map((x) => x.inFlight).sort(), [0, 1]);
    await s.releaseAccount(first.lease);
    await s.releaseAccount(first.lease);
    const x = await s.acquireAccount(req([acct('a')], T0 + 10));
    const y = await s.acquireAccount(req([acct('a')], T0 + 10));
    t.ok(x.ok && y.ok === false, 'one slot');
    await s.releaseAccount(first.lease);
    await s.releaseAccount({ group: 'g', account: 'nobody', requestId: 'none' });
    t.equal(await take(s, [acct('a')], T0 + 20), 'busy', 'releasing an old lease again never frees another one');
    if (x.ok) await s.releaseAccount(x.lease);
    t.equal(await take(s, [acct('a')], T0 + 30), 'a');
  });

  t.test('accounts: sticky bindings and response pins, kept apart, with a TTL', async (t) => {
    const s = await open(t, make);
    t.equal(await s.bound('g', 'sticky', 'sess'), undefined);
    await s.bind('g', 'sticky', 'sess', 'a', 60_000);
    await s.bind('g', 'pin', 'sess', 'b', 60_000);
    t.equal(await s.bound('g', 'sticky', 'sess'), 'a');
    t.equal(await s.bound('g', 'pin', 'sess'), 'b', 'kinds are separate');
    t.equal(await s.bound('g2', 'sticky', 'sess'), undefined, 'groups are separate');
    await s.bind('g', 'sticky', 'sess', 'c', 60_000);
    t.equal(await s.bound('g', 'sticky', 'sess'), 'c', 'binding again moves it');
    await s.bind('g', 'sticky', 'sess', 'c', 0);
    t.equal(await s.bound('g', 'sticky', 'sess'), undefined, 'a zero TTL removes it');
    await s.bind('g', 'pin', 'resp_1', 'a', 40);
    t.equal(await s.bound('g', 'pin', 'resp_1'), 'a');
    await new Promise((r) => setTimeout(r, 120));
    t.equal(await s.bound('g', 'pin', 'resp_1'), undefined, 'gone after its TTL');
    t.equal(await s.bound('g', 'pin', 'sess'), 'b');
  });

  t.test('accounts: a binding is looked up within the decision (sticky prefers, a pin is the only account)', async (t) => {
    const s = await open(t, make);
    const c = [acct('a'), acct('b')];
    const sticky = (name: string) => ({ kind: 'sticky' as const, name });
    const pin = (name: string) => ({ kind: 'pin' as const, name });
    await s.bind('g', 'sticky', 'sess', 'b', 60_000);
    const hit = await s.acquireAccount(req(c, T0, { bound: [sticky('sess')] }));
    t.match(hit, { ok: true, lease: { account: 'b' }, preferred: true, bound: { kind: 'sticky', name: 'sess', account: 'b' } });
    const moved = await s.acquireAccount(req(c, T0, { bound: [sticky('sess')] }));
    t.match(moved, { ok: true, lease: { account: 'a' }, preferred: false, bound: { account: 'b' } }, 'a full bound account: another one');
    const none = await s.acquireAccount(req(c, T0, { group: 'g2', bound: [sticky('nothing')] }));
    t.ok(none.ok && none.bound === undefined, 'no binding: nothing found, any account');
    await s.bind('g2', 'sticky', 'elsewhere', 'z', 60_000);
    const away = await s.acquireAccount(req(c, T0, { group: 'g2', bound: [sticky('elsewhere')] }));
    t.match(away, { ok: true, preferred: false, bound: { account: 'z' } }, 'bound to a non-candidate: found, not preferred');

    await s.bind('g3', 'pin', 'resp_1', 'a', 60_000);
    await s.bind('g3', 'sticky', 'sess', 'b', 60_000);
    const both = [pin('resp_0'), pin('resp_1'), sticky('sess')];
    const pinned = await s.acquireAccount(req(c, T0, { group: 'g3', bound: both }));
    t.match(pinned, { ok: true, lease: { account: 'a' }, preferred: true, bound: { kind: 'pin', name: 'resp_1', account: 'a' } }, 'the first binding found wins');
    t.equal(show(await s.acquireAccount(req(c, T0, { group: 'g3', bound: both }))), 'busy', 'a pin is the only account: busy, not b');
    const gone = await s.acquireAccount(req([acct('b')], T0, { group: 'g3', bound: both }));
    t.match(gone, { ok: false, reason: 'none', bound: { kind: 'pin', account: 'a' } }, 'pinned to a non-candidate: none');
    t.equal(show(await s.acquireAccount(req(c, T0, { group: 'g3', bound: [pin('resp_9'), sticky('sess')] }))), 'b', 'no pin: the session');
    await s.bind('g4', 'pin', 'resp_1', 'a', 60_000);
    t.equal(show(await s.acquireAccount(req(c, T0, { group: 'g4', prefer: 'b', bound: [pin('resp_1')] }))), 'b', 'prefer given: no lookup');
    t.equal(show(await s.acquireAccount(req([], T0, { group: 'g3', bound: both }))), 'none', 'no candidates: none, nothing looked up');
  });

  t.test('accounts: a release carries the ending: success ends probing, names are bound to the account', async (t) => {
    const s = await open(t, make);
    const c = [acct('a')];
    await s.cooldown('g', 'a', T0 + 1000, 'rate_limited');
    const r = await s.acquireAccount(req(c, T0 + 1000));
    if (!r.ok) return t.fail('acquire');
    t.equal((await s.accountStates('g', ['a'], T0 + 1000))[0].probing, true);
    await s.releaseAccount(r.lease, { succeededAt: T0 + 1000, bind: [{ kind: 'sticky', name: 'sess', ttlMs: 60_000 }, { kind: 'pin', name: 'resp_1', ttlMs: 60 }] });
    t.strictSame(await s.accountStates('g', ['a'], T0 + 1001), [{ id: 'a', inFlight: 0, probing: false, lastUsed: T0 + 1000 }], 'released, probing over');
    t.equal(await s.bound('g', 'sticky', 'sess'), 'a');
    t.equal(await s.bound('g', 'pin', 'resp_1'), 'a');
    await new Promise((done) => setTimeout(done, 150));
    t.equal(await s.bound('g', 'pin', 'resp_1'), undefined, 'with its own TTL');

    await s.cooldown('g', 'a', T0 + 9000, 'overloaded');
    const early = await s.acquireAccount(req(c, T0 + 9000));
    if (!early.ok) return t.fail('acquire');
    await s.releaseAccount(early.lease, { succeededAt: T0 + 5000 });
    t.equal((await s.accountStates('g', ['a'], T0 + 9000))[0].probing, true, 'a success from before the cool-down end proves nothing');
    const plain = await s.acquireAccount(req(c, T0 + 9001));
    if (!plain.ok) return t.fail('acquire');
    await s.releaseAccount(plain.lease, {});
    t.equal((await s.accountStates('g', ['a'], T0 + 9002))[0].inFlight, 0, 'an empty ending is a plain release');
  });
}
