// The memory store's account states keep one shape (V8's map) whatever happened to them: one only leased, one cooled
// down, one restored from the file store's copy. decide() reads every candidate's state per request; states of one
// shape keep those reads monomorphic. Checked with %HaveSameMap in a child process (the flag that allows it must be set
// before V8 starts), as test/core/ctx-shape.test.ts does for contexts.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const accounts = fileURLToPath(new URL('../../core/store/memory/accounts.ts', import.meta.url));

const script = `
import { AccountBook } from ${JSON.stringify(accounts)};
const book = new AccountBook();
const now = Date.now();
const cands = ['leased', 'cooled', 'fresh'].map((id) => ({ id, priority: 1, weight: 1, concurrency: 4 }));
const r = book.acquire({ group: 'g', requestId: 'r1#0', now, leaseMs: 60000, candidates: cands, prefer: 'leased', only: true }, 0.5);
if (!r.ok) throw new Error('no lease');
book.release(r.lease, { succeededAt: now });
book.cooldown('g', 'cooled', now + 1000, 'rate_limited');
book.restore('g', 'restored', { coolUntil: undefined, reason: undefined, probing: false, lastUsed: now - 5, pass: 3 });
book.cooldown('g', 'fresh', now - 1, 'overloaded');
const state = (id) => book.groups.get('g').get(id);
console.log(JSON.stringify({
  leasedCooled: %HaveSameMap(state('leased'), state('cooled')),
  leasedRestored: %HaveSameMap(state('leased'), state('restored')),
  leasedFresh: %HaveSameMap(state('leased'), state('fresh')),
  fast: %HasFastProperties(state('leased')) && %HasFastProperties(state('cooled')),
}));
`;

t.test('account states of different histories share one map', async (t) => {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, boolean>;
  t.ok(r.leasedCooled, 'a leased account and a cooled one');
  t.ok(r.leasedRestored, 'and one restored from the file store');
  t.ok(r.leasedFresh, 'and one cooled before any lease');
  t.ok(r.fast, 'fast properties');
});
