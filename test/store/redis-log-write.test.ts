// The record logs' writer (lua/log.lua add_chunk, through log-global.lua) and what a reader then sees (redis/log.ts):
// chunks counted once, trimmed to the cap (whole chunks, then a count off the oldest) and the retention (whole chunks;
// readers hide the older lines of one straddling it).
import t from 'tap';
import { Redis } from 'ioredis';
import { scripts } from '../../core/store/lua/index.ts';
import { KeyLayout } from '../../core/store/redis/keys.ts';
import { RedisLogIndex } from '../../core/store/redis/log.ts';
import { pageRecords } from '../../core/store/paging.ts';
import { redisForTest } from './redis-server.ts';

const T = Date.UTC(2025, 0, 15, 10, 0, 0);
const DAY = 86_400_000;

t.test('log chunks: written once, trimmed to the cap and the retention', async (t) => {
  const { url, prefix } = await redisForTest(t, 'log-write');
  const c = new Redis(url);
  t.teardown(() => c.quit());
  const g = new KeyLayout(prefix).stripes[0];
  const keys = [g.log, g.logIndex, g.summary('minute', 1), g.summary('hour', 2), g.summary('day', 3)];
  const line = (id: string, time: number) => `${time}\t${JSON.stringify({ request_id: id, time })}\n`;
  /** Writes a chunk of records [id, time] (oldest first) as the process does: its text, then the script (with a cap and
   * a retention; a requests field per record). */
  const write = async (id: string, records: [string, number][], cap: number, retentionMs = 30 * DAY) => {
    await c.hset(g.log, id, records.map(([r, time]) => line(r, time)).join(''));
    return scripts.logGlobal.run(c, keys, [
      retentionMs, cap, 3_600_000, 3_600_000, 3_600_000, id, records.length, records[0][1], records[records.length - 1][1], 1, 'requests', records.length,
    ]);
  };
  /** What a reader lists, newest first. */
  const listed = async (retentionMs = 30 * DAY) =>
    (await pageRecords(new RedisLogIndex(c, g, retentionMs), { limit: 100 })).records.map((r) => r.request_id);
  /** The log: chunk members of the index (oldest first) and the ids of each chunk's lines. */
  const log = async () => {
    const members = await c.zrange(g.logIndex, '0', '-1');
    const texts = members.length ? await c.hmget(g.log, ...members.map((m) => m.split(' ')[0])) : [];
    return {
      members,
      ids: texts.map((x) => (x ?? '').split('\n').filter(Boolean).map((l) => JSON.parse(l.split('\t')[1]).request_id)),
      total: Number(await c.hget(g.log, '#')),
    };
  };

  t.equal(await write('c1', [['a', T], ['b', T + 1]], 10), 1);
  t.equal(await write('c1', [['a', T], ['b', T + 1]], 10), 0, 'a chunk sent again writes nothing');
  t.equal(await c.hget(g.summary('minute', 1), 'requests'), '2', 'and counts nothing twice');
  t.strictSame(await log(), { members: [`c1 ${T} 2`], ids: [['a', 'b']], total: 2 });

  // Cap 6: 2 + 3 = 5, nothing goes.
  await write('c2', [['c', T + 10], ['d', T + 11], ['e', T + 12]], 6);
  t.equal((await log()).total, 5);

  // Cap 5: one record off the oldest chunk (its index member counts one; its text stays).
  await write('c3', [['f', T + 20]], 5);
  t.strictSame(await log(), {
    members: [`c1 ${T} 1`, `c2 ${T + 10} 3`, `c3 ${T + 20} 1`], ids: [['a', 'b'], ['c', 'd', 'e'], ['f']], total: 5,
  }, 'the oldest chunk counts one record less');
  t.strictSame(await listed(), ['f', 'e', 'd', 'c', 'b'], 'readers skip its oldest line');

  // Cap 3 with a chunk of 2: the whole oldest chunk goes, and one line of the next.
  await write('c4', [['g', T + 30], ['h', T + 31]], 3);
  t.strictSame(await log(), {
    members: [`c3 ${T + 20} 1`, `c4 ${T + 30} 2`], ids: [['f'], ['g', 'h']], total: 3,
  }, 'c1 and c2 dropped whole (1 + 3 past the cap of 3)');

  // Retention of 1 day before the newest chunk's newest record: the chunks all older go, a chunk straddling the cutoff
  // stays and readers hide its lines before it.
  await write('c5', [['i', T + DAY + 30], ['j', T + DAY + 31]], 10, DAY);
  t.strictSame(await log(), {
    members: [`c4 ${T + 30} 2`, `c5 ${T + DAY + 30} 2`], ids: [['g', 'h'], ['i', 'j']], total: 4,
  }, 'c3 (all older than the cutoff) dropped, c4 (straddling it) kept');
  t.strictSame(await listed(DAY), ['j', 'i', 'h'], 'g (at the cutoff - 1) hidden, h (at the cutoff) listed');
  t.ok((await c.pttl(g.log)) > 0 && (await c.pttl(g.logIndex)) > 0, 'the log expires after the retention');

  // A chunk older than others (a batch held through an outage) past the cap: the oldest chunk goes whole, then the new
  // one counts fewer (down to none: never dropped, so a batch sent again still finds it counted).
  await write('c6', [['k', T + DAY + 1]], 2);
  t.strictSame((await log()).members, [`c6 ${T + DAY + 1} 0`, `c5 ${T + DAY + 30} 2`], 'c4 dropped, c6 counts none');
  t.strictSame(await listed(), ['j', 'i']);
  t.equal(await write('c6', [['k', T + DAY + 1]], 2), 0, 'sent again: found counted');
  // A cap lowered below what the list holds: past the new chunk, the next ones give what is left.
  await write('c7', [['m', T]], 1);
  t.strictSame(await log(), {
    members: [`c7 ${T} 0`, `c5 ${T + DAY + 30} 1`], ids: [['m'], ['i', 'j']], total: 1,
  }, 'c6 (counting none) dropped, one record off c5; no count below 0');
  t.strictSame(await listed(), ['j']);
});
