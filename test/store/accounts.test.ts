// The scheduling rules in rules/accounts.ts, with chosen rolls (the stores roll Math.random(); the contract suite
// checks their weighted share statistically, redis-account-parity.test.ts checks Lua against these rules).
import t from 'tap';
import { cleanCandidates, pickAccount, weightedChoice, type CandidateView } from '../../core/store/rules/accounts.ts';

const v = (over: Partial<CandidateView> = {}): CandidateView =>
  ({ priority: 1, weight: 1, concurrency: 1, inUse: 0, holds: false, ...over });

t.test('weightedChoice: each index owns a share of [0, 1) proportional to its weight', async (t) => {
  t.equal(weightedChoice([3, 1], 0), 0);
  t.equal(weightedChoice([3, 1], 0.7499), 0);
  t.equal(weightedChoice([3, 1], 0.75), 1);
  t.equal(weightedChoice([3, 1], 0.9999999), 1);
  t.equal(weightedChoice([0, 2, 0], 0), 1, 'zero weights own nothing');
  t.equal(weightedChoice([0, 2, 0], 0.999), 1);
  t.equal(weightedChoice([0, 0], 0.6), 1, 'all zero: uniform');
  t.equal(weightedChoice([1], 1), 0, 'a roll that rounds up to the total picks the last positive weight');
});

t.test('pickAccount: order, ties, refusals', async (t) => {
  const now = 1000;
  t.strictSame(pickAccount([v({ priority: 2 }), v({ priority: 1 })], -1, false, now, 0), { take: 1, preferred: false, reuse: false, pass: 999_999 });
  t.equal((pickAccount([v({ inUse: 1, concurrency: 4 }), v({ inUse: 1, concurrency: 2 })], -1, false, now, 0) as { take: number }).take, 0, 'load 1/4 < 1/2');
  t.equal((pickAccount([v({ lastUsed: 5 }), v()], -1, false, now, 0) as { take: number }).take, 1, 'never used first');
  t.equal((pickAccount([v({ lastUsed: 5, weight: 3 }), v({ lastUsed: 5 })], -1, false, now, 0.74) as { take: number }).take, 0);
  t.equal((pickAccount([v({ lastUsed: 5, weight: 3 }), v({ lastUsed: 5 })], -1, false, now, 0.76) as { take: number }).take, 1);
  t.strictSame(pickAccount([v({ inUse: 1 }), v({ coolingUntil: 3000 })], -1, false, now, 0), { refuse: 'busy' });
  t.strictSame(pickAccount([v({ coolingUntil: 3000 }), v({ coolingUntil: 1500 })], -1, false, now, 0), { refuse: 'cooling', retryAfterMs: 500 });
  t.strictSame(pickAccount([], -1, false, now, 0), { refuse: 'none' });
  t.strictSame(pickAccount([v(), v({ priority: 9 })], 1, true, now, 0), { take: 1, preferred: true, reuse: false, pass: 999_999 });
  t.strictSame(pickAccount([v(), v({ inUse: 1 })], 1, true, now, 0), { refuse: 'busy' });
  t.strictSame(pickAccount([v(), v({ coolingUntil: 4000 })], 1, true, now, 0), { refuse: 'cooling', retryAfterMs: 3000 });
  t.strictSame(pickAccount([v(), v({ holds: true, inUse: 1 })], -1, false, now, 0), { take: 1, preferred: false, reuse: true });
  t.strictSame(pickAccount([v({ holds: true, inUse: 1 }), v()], 1, true, now, 0), { take: 1, preferred: true, reuse: false, pass: 999_999 },
    'only: a lease held elsewhere is not reused');
});

/** Picks one after another with nothing in flight, as sequential traffic does: the ids taken. */
function sequence(views: CandidateView[], picks: number): number[] {
  const taken: number[] = [];
  for (let k = 0; k < picks; k++) {
    const p = pickAccount(views, -1, false, 1000 + k, 0.5);
    if (!('take' in p)) throw new Error('refused');
    views[p.take].pass = p.pass;
    views[p.take].lastUsed = 1000 + k;
    taken.push(p.take);
  }
  return taken;
}

t.test('stride: picks follow the weights exactly, equal weights take turns', async (t) => {
  const share = (weights: number[], picks: number) => {
    const count = weights.map(() => 0);
    for (const i of sequence(weights.map((weight) => v({ weight })), picks)) count[i]++;
    return count;
  };
  t.strictSame(share([3, 1], 400), [300, 100]);
  const thirds = share([5, 3, 2], 1000);
  t.ok(thirds.every((n, i) => Math.abs(n - [500, 300, 200][i]) <= 1), `5:3:2 within one pick of 500/300/200 (strides round): ${thirds}`);
  const turns = sequence([v(), v(), v()], 9);
  t.strictSame(turns.slice(3, 6), turns.slice(0, 3), 'round two repeats round one');
  t.strictSame(turns.slice(6, 9), turns.slice(0, 3));
  t.strictSame([...turns.slice(0, 3)].sort(), [0, 1, 2]);
});

t.test('stride: an account back from a cool-down, or new, gets no run of picks to catch up', async (t) => {
  const views = [v({ pass: 50_000_000 }), v({ pass: 50_000_000 }), v({ pass: 1_000_000 })];
  const next = sequence(views, 6);
  t.ok(next.filter((i) => i === 2).length <= 3, `the account that sat out takes ${next.filter((i) => i === 2).length} of 6`);
  const joined = [v({ pass: 7_000_000 }), v({ pass: 8_000_000 }), v()];
  const first = sequence(joined, 4);
  t.equal(first[0], 2, 'a new account goes first');
  t.ok(first.filter((i) => i === 2).length <= 2, 'and then takes its turn');
});

t.test('cleanCandidates: first of a repeated id, concurrency at least 1, weight at least 0', async (t) => {
  t.strictSame(cleanCandidates([
    { id: 'a', priority: 1, weight: -2, concurrency: 0 },
    { id: 'a', priority: 9, weight: 9, concurrency: 9 },
    { id: 'b', priority: Number.NaN, weight: Number.NaN, concurrency: 2.7 },
  ]), [
    { id: 'a', priority: 1, weight: 0, concurrency: 1 },
    { id: 'b', priority: 0, weight: 1, concurrency: 2 },
  ]);
});
