// RedisLogIndex against a real Redis: the chunked log lists records exactly as one sorted list would (time, then id,
// newest first), through pageRecords' cursors and filters, and loads only the chunks a page needs.
import t from 'tap';
import { Redis } from 'ioredis';
import { pageRecords, type RecordIndex } from '../../core/store/paging.ts';
import { MergedLogIndex, RedisLogIndex, type LogKeys } from '../../core/store/redis/log.ts';
import type { RecordFilter, UsageRecord } from '../../core/store/types.ts';
import { record, T0, type Tap } from './fixtures.ts';
import { redisForTest } from './redis-server.ts';
import { seeded } from '../helpers/random.ts';

async function setup(t: Tap, label: string): Promise<{ c: Redis; keys: LogKeys }> {
  const { url, prefix } = await redisForTest(t, label);
  const c = new Redis(url);
  t.teardown(() => c.quit());
  const tag = `${prefix}{k:log}:`;
  return { c, keys: { log: `${tag}log`, logIndex: `${tag}logidx` } };
}

/** Writes one chunk as the batch writer does; `gone`: listed in logIndex, its text expired. */
async function writeChunk(c: Redis, keys: LogKeys, id: string, recs: UsageRecord[], gone = false): Promise<void> {
  const sorted = [...recs].sort((a, b) => a.time - b.time || (a.request_id < b.request_id ? -1 : 1));
  const text = sorted.map((r) => `${r.time}\t${JSON.stringify(r)}\n`).join('');
  if (!gone) await c.hset(keys.log, id, text);
  await c.hincrby(keys.log, '#', sorted.length);
  await c.zadd(keys.logIndex, sorted[sorted.length - 1].time, `${id} ${sorted[0].time} ${sorted.length}`);
}

const newestFirst = (a: UsageRecord, b: UsageRecord) => b.time - a.time || (a.request_id < b.request_id ? 1 : -1);

/** Every page of a listing, each from a fresh index (as readRecords makes one per call), by cursor. */
async function listAll(c: Redis, keys: LogKeys, filter: RecordFilter, index: () => RecordIndex = () => new RedisLogIndex(c, keys)): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await pageRecords(index(), { ...filter, cursor });
    ids.push(...page.records.map((r) => r.request_id));
    cursor = page.cursor;
    if (++pages > 1000) throw new Error('runaway paging');
  } while (cursor);
  return { ids, pages };
}

/** A client that notes the chunk ids each HMGET of `log` asks for. */
function spy(c: Redis, keys: LogKeys): { client: Redis; loaded: string[][] } {
  const loaded: string[][] = [];
  const client = new Proxy(c, {
    get(target, p) {
      const v = Reflect.get(target, p, target);
      if (p === 'hmget') {
        return (key: string, ...fields: string[]) => {
          if (key === keys.log) loaded.push(fields);
          return target.hmget(key, ...fields);
        };
      }
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { client, loaded };
}

t.test('a random log of overlapping chunks and ties on one millisecond lists as one sorted list', async (t) => {
  const { c, keys } = await setup(t, 'log-random');
  const next = seeded(7);
  const rand = (n: number) => Math.floor(next() * n);
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[rand(16)]).join('');
  const used = new Set<string>();
  const newId = (): string => {
    const kind = rand(10);
    // Mostly UUIDs as the gateway makes them; some short ids, upper case, and ids with a quote or a backslash.
    const id = kind < 6 ? `${hex(8)}-${hex(4)}-4${hex(3)}-${hex(4)}-${hex(12)}`
      : kind < 8 ? `r${rand(50)}` : kind < 9 ? `R${hex(2).toUpperCase()}` : `q${'"\\'[rand(2)]}${rand(20)}`;
    return used.has(id) ? newId() : (used.add(id), id);
  };
  // Times on a 500 ms grid over ~3 minutes: many records share a millisecond, within chunks and across them.
  const rec = (time: number) => {
    const over: Partial<UsageRecord> = { request_id: newId(), time, key_id: ['ka', 'kb'][rand(2)], model: ['m1', 'm2', 'm3'][rand(3)] };
    // Some JSON with request_id after another field ending in "request_id" (the id is read without parsing the JSON).
    return rand(4) === 0 ? { client_request_id: 'cr', ...record(over) } : record(over);
  };
  const visible: UsageRecord[] = [];
  for (let i = 0; i < 18; i++) {
    const start = T0 + rand(360) * 500;
    const steps = rand(3) === 0 ? 119 : rand(10); // up to 59 500 ms wide
    const recs = Array.from({ length: 1 + rand(12) }, () => rec(start + rand(steps + 1) * 500));
    const gone = i === 5;
    await writeChunk(c, keys, `c${i}`, recs, gone);
    if (!gone) visible.push(...recs);
  }
  visible.sort(newestFirst);
  t.ok(visible.length > 80, `${visible.length} records`);
  const times = visible.map((r) => r.time);
  t.ok(new Set(times).size < times.length - 10, 'many share a millisecond');

  const from = T0 + 40_000;
  const to = T0 + 130_000;
  const filters: { name: string; filter: Omit<RecordFilter, 'limit'>; keep: (r: UsageRecord) => boolean }[] = [
    { name: 'everything', filter: {}, keep: () => true },
    { name: 'from..to', filter: { from, to }, keep: (r) => r.time >= from && r.time <= to },
    { name: 'key', filter: { key: 'kb' }, keep: (r) => r.key_id === 'kb' },
    { name: 'model and from', filter: { model: 'm2', from }, keep: (r) => r.model === 'm2' && r.time >= from },
  ];
  for (const { name, filter, keep } of filters) {
    const want = visible.filter(keep).map((r) => r.request_id);
    t.ok(want.length > 5, `${name}: ${want.length} records to list`);
    for (const limit of [1, 3, 7, 100]) {
      const got = await listAll(c, keys, { ...filter, limit });
      t.strictSame(got.ids, want, `${name}, ${limit} a page`);
      t.equal(got.pages, Math.max(1, Math.ceil(want.length / limit)), `${name}, ${limit} a page: no empty last page`);
    }
  }
});

t.test('the global list\'s stripes list as one sorted list: the newest `cap` of them all, the retention from the newest of all', async (t) => {
  const { c, keys } = await setup(t, 'log-stripes');
  const stripes: LogKeys[] = [0, 1, 2].map((i) => ({ log: `${keys.log}:${i}`, logIndex: `${keys.logIndex}:${i}` }));
  const next = seeded(11);
  const rand = (n: number) => Math.floor(next() * n);
  let n = 0;
  const all: UsageRecord[] = [];
  // Chunks to the stripes in turn (as the batch writes them), times on a 250 ms grid: ties within and across stripes.
  for (let i = 0; i < 24; i++) {
    const start = T0 + rand(240) * 250;
    const recs = Array.from({ length: 1 + rand(8) }, () => record({ request_id: `r${String(n++).padStart(3, '0')}`, time: start + rand(20) * 250, model: ['m1', 'm2'][rand(2)] }));
    await writeChunk(c, stripes[i % 3], `c${i}`, recs);
    all.push(...recs);
  }
  all.sort(newestFirst);
  t.ok(all.length > 60, `${all.length} records`);
  const filters = [
    { name: 'everything', filter: {}, keep: (_: UsageRecord) => true },
    { name: 'model', filter: { model: 'm2' }, keep: (r: UsageRecord) => r.model === 'm2' },
  ];
  for (const cap of [1, 17, all.length - 1, all.length, 10_000]) {
    for (const { name, filter, keep } of filters) {
      const want = all.slice(0, cap).filter(keep).map((r) => r.request_id);
      for (const limit of [1, 4, 100]) {
        const got = await listAll(c, keys, { ...filter, limit }, () => new MergedLogIndex(c, stripes, Infinity, cap));
        t.strictSame(got.ids, want, `cap ${cap}, ${name}, ${limit} a page`);
      }
    }
  }
  // A retention of 20 s before the newest record of any stripe: a stripe's own newest does not move its floor.
  const newest = all[0].time;
  const kept = all.filter((r) => r.time >= newest - 20_000).map((r) => r.request_id);
  t.ok(kept.length > 3 && kept.length < all.length, `${kept.length} within the retention`);
  t.strictSame((await listAll(c, keys, { limit: 5 }, () => new MergedLogIndex(c, stripes, 20_000, 10_000))).ids, kept);
});

t.test('records on one millisecond in several chunks: the one with the largest id comes first, whichever chunk holds it', async (t) => {
  const { c, keys } = await setup(t, 'log-ties');
  // ZREVRANGEBYSCORE gives c2 before c1 (equal max, members by text), but c1 holds the largest id at T0.
  await writeChunk(c, keys, 'c2', [record({ request_id: 'b', time: T0 }), record({ request_id: 'e', time: T0 - 10 })]);
  await writeChunk(c, keys, 'c1', [record({ request_id: 'd', time: T0 }), record({ request_id: 'a', time: T0 - 20 })]);
  await writeChunk(c, keys, 'c3', [record({ request_id: 'c', time: T0 }), record({ request_id: 'f', time: T0 - 10 })]);
  const want = [{ score: T0, id: 'd' }, { score: T0, id: 'c' }, { score: T0, id: 'b' }, { score: T0 - 10, id: 'f' }, { score: T0 - 10, id: 'e' }, { score: T0 - 20, id: 'a' }];
  for (let offset = 0; offset < want.length; offset++) {
    t.strictSame(await new RedisLogIndex(c, keys).page(Infinity, -Infinity, offset, 1), [want[offset]], `offset ${offset}`);
  }
  t.strictSame(await new RedisLogIndex(c, keys).page(T0 - 10, T0 - 10, 0, 10), want.slice(3, 5), 'one millisecond alone');
  const index = new RedisLogIndex(c, keys);
  const entries = await index.page(Infinity, -Infinity, 0, 10);
  t.strictSame(entries, want);
  t.strictSame((await index.load(entries)).map((r) => r?.request_id), ['d', 'c', 'b', 'f', 'e', 'a'], 'load reads every chunk');
});

t.test('empty lists: no keys at all, or nothing in range', async (t) => {
  const { c, keys } = await setup(t, 'log-empty');
  t.strictSame(await pageRecords(new RedisLogIndex(c, keys), { limit: 10 }), { records: [] });
  t.strictSame(await new RedisLogIndex(c, keys).page(Infinity, -Infinity, 0, 10), []);
  t.strictSame(await new RedisLogIndex(c, keys).load([{ score: T0, id: 'nope' }]), [undefined]);
  await writeChunk(c, keys, 'c1', [record({ request_id: 'x', time: T0 })]);
  await writeChunk(c, keys, 'c2', [record({ request_id: 'y', time: T0 + 5 })]);
  t.strictSame(await pageRecords(new RedisLogIndex(c, keys), { limit: 10, from: T0 + 6 }), { records: [] }, 'all older than from');
  t.strictSame(await pageRecords(new RedisLogIndex(c, keys), { limit: 10, to: T0 - 1 }), { records: [] }, 'all newer than to');
  t.strictSame((await pageRecords(new RedisLogIndex(c, keys), { limit: 10 })).records.map((r) => r.request_id), ['y', 'x']);
});

t.test('a page loads the chunks it needs, not the whole log, and one index parses a chunk once', async (t) => {
  const { c, keys } = await setup(t, 'log-lazy');
  // 20 chunks of 10 records, 10 s apart, none overlapping: chunk i holds T0 + i * 10 000 .. + 900.
  const all: UsageRecord[] = [];
  for (let i = 0; i < 20; i++) {
    const recs = Array.from({ length: 10 }, (_, j) => record({ request_id: `r${String(i * 10 + j).padStart(3, '0')}`, time: T0 + i * 10_000 + j * 100 }));
    await writeChunk(c, keys, `c${String(i).padStart(2, '0')}`, recs);
    all.push(...recs);
  }
  all.sort(newestFirst);
  const s = spy(c, keys);
  const first = await pageRecords(new RedisLogIndex(s.client, keys), { limit: 5 });
  t.strictSame(first.records.map((r) => r.request_id), all.slice(0, 5).map((r) => r.request_id), 'the newest 5');
  t.strictSame(s.loaded, [['c19']], 'the newest chunk alone');

  s.loaded.length = 0;
  const second = await pageRecords(new RedisLogIndex(s.client, keys), { limit: 8, cursor: first.cursor });
  t.strictSame(second.records.map((r) => r.request_id), all.slice(5, 13).map((r) => r.request_id), 'the next 8');
  const loaded = s.loaded.flat();
  t.ok(loaded.length >= 1 && loaded.length <= 2, `the next page loads 1-2 chunks: ${loaded.join(' ')}`);
  t.ok(loaded.every((id) => id === 'c19' || id === 'c18'), 'the chunks that hold it');

  s.loaded.length = 0;
  const deep = await pageRecords(new RedisLogIndex(s.client, keys), { limit: 5, to: T0 + 55_000 });
  t.strictSame(deep.records.map((r) => r.request_id), ['r059', 'r058', 'r057', 'r056', 'r055']);
  t.strictSame(s.loaded, [['c05']], 'in the middle of the log: the chunk of that time alone');

  s.loaded.length = 0;
  const index = new RedisLogIndex(s.client, keys);
  const a = await index.page(Infinity, -Infinity, 0, 3);
  const b = await index.page(a[2].score, -Infinity, 1, 3);
  t.strictSame([...a, ...b].map((e) => e.id), all.slice(0, 6).map((r) => r.request_id));
  t.strictSame(s.loaded, [['c19']], 'the second page on one index reads its chunk from the first');
  t.strictSame((await index.load(b)).map((r) => r?.request_id), all.slice(3, 6).map((r) => r.request_id), 'and load finds its records');
});
