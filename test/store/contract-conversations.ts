// Contract: conversations the gateway keeps for clients (putConversation / getConversation): opaque text per key and
// id, replaced by a later put, expiring on the real clock, never read by another key, hostile ids refused.
import { CONVERSATION_MAX_BYTES } from '../../core/store/conversations.ts';
import { open, uid, type MakeStore, type Tap } from './fixtures.ts';

export function conversationsContract(t: Tap, makeStore: MakeStore): void {
  t.test('conversations: kept per key, replaced, expiring, refused when malformed', async (t) => {
    const s = await open(t, makeStore);
    const key = uid('k');
    const other = uid('k');
    const text = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'héllo ✓' }] }] });
    await s.putConversation(key, 'resp_abc', text, 60_000);
    t.equal(await s.getConversation(key, 'resp_abc'), text, 'read back byte for byte');
    t.equal(await s.getConversation(other, 'resp_abc'), undefined, 'another key reads nothing');
    t.equal(await s.getConversation(key, 'resp_none'), undefined, 'unknown id');
    await s.putConversation(key, 'resp_abc', '{"v":2}', 60_000);
    t.equal(await s.getConversation(key, 'resp_abc'), '{"v":2}', 'a later put replaces');

    await s.putConversation(key, 'resp_short', '{}', 40);
    t.equal(await s.getConversation(key, 'resp_short'), '{}');
    await new Promise((r) => setTimeout(r, 120));
    t.equal(await s.getConversation(key, 'resp_short'), undefined, 'expired after its TTL');

    for (const bad of ['', 'a/b', '../x', 'x'.repeat(129), 'id with space', 'k}:x', '*']) {
      await t.rejects(s.putConversation(key, bad, '{}', 60_000), RangeError, `put refuses ${JSON.stringify(bad)}`);
      t.equal(await s.getConversation(key, bad), undefined, `get of ${JSON.stringify(bad)} reads nothing`);
    }
    await t.rejects(s.putConversation(key, 'resp_big', 'x'.repeat(CONVERSATION_MAX_BYTES + 1), 60_000), RangeError, 'too large');
    const large = 'y'.repeat(1024 * 1024);
    await s.putConversation(key, 'resp_large', large, 60_000);
    t.equal((await s.getConversation(key, 'resp_large'))?.length, large.length, 'a 1 MiB conversation');
  });
}
