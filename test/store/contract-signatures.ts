// Contract: tool-call signatures the gateway keeps for clients that cannot return them (putSignature / getSignatures):
// text per key and name, read in the order asked, replaced by a later put, expiring on the real clock, never read by
// another key, hostile names refused or read as nothing.
import { SIGNATURE_MAX_BYTES } from '../../core/store/signatures.ts';
import { open, uid, type MakeStore, type Tap } from './fixtures.ts';

export function signaturesContract(t: Tap, makeStore: MakeStore): void {
  t.test('signatures: kept per key, read in order, replaced, expiring, refused when malformed', async (t) => {
    const s = await open(t, makeStore);
    const key = uid('k');
    const other = uid('k');
    await s.putSignature(key, 'c_abc', 'gw1:gemini:c2lnLWE=', 60_000);
    await s.putSignature(key, 'c_def', 'sig-b', 60_000);
    t.strictSame(await s.getSignatures(key, ['c_def', 'c_none', 'c_abc']), ['sig-b', undefined, 'gw1:gemini:c2lnLWE='], 'in the order asked');
    t.strictSame(await s.getSignatures(other, ['c_abc', 'c_def']), [undefined, undefined], 'another key reads nothing');
    t.strictSame(await s.getSignatures(key, []), [], 'nothing asked, nothing read');
    await s.putSignature(key, 'c_abc', 'sig-2', 60_000);
    t.strictSame(await s.getSignatures(key, ['c_abc']), ['sig-2'], 'a later put replaces');

    await s.putSignature(key, 'c_short', 'x', 40);
    t.strictSame(await s.getSignatures(key, ['c_short']), ['x']);
    await new Promise((r) => setTimeout(r, 120));
    t.strictSame(await s.getSignatures(key, ['c_short', 'c_def']), [undefined, 'sig-b'], 'expired after its TTL, the others kept');

    for (const bad of ['', 'a/b', '../x', 'x'.repeat(129), 'id with space', 'k}:x', '*']) {
      await t.rejects(s.putSignature(key, bad, 'v', 60_000), RangeError, `put refuses ${JSON.stringify(bad)}`);
      t.strictSame(await s.getSignatures(key, [bad, 'c_def']), [undefined, 'sig-b'], `get of ${JSON.stringify(bad)} reads nothing`);
    }
    await t.rejects(s.putSignature(key, 'c_big', 'x'.repeat(SIGNATURE_MAX_BYTES + 1), 60_000), RangeError, 'too large');
    const large = 'y'.repeat(SIGNATURE_MAX_BYTES);
    await s.putSignature(key, 'c_large', large, 60_000);
    t.equal((await s.getSignatures(key, ['c_large']))[0]?.length, large.length, 'the largest kept');
  });
}
