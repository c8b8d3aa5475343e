// The Redis store writes settled records and rollups behind, in batches (redis/batch.ts): what it costs Redis, what a
// crash loses (records of the unsent batch, never a limit) and a batch that failed written once when Redis is back.
// Each test runs its own redis-server, so INFO commandstats counts only its own calls.
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisStore, type RedisStoreOptions } from '../../core/store/redis/store.ts';
import { BATCH_MS, type SettleBatch } from '../../core/store/redis/batch.ts';
import { redisProcess } from '../helpers/redis-process.ts';
import { T0, admitReq, record } from './fixtures.ts';

/** Calls per command since the last CONFIG RESETSTAT, from INFO commandstats. */
async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

t.test('300 settlements of one key: admit and settle per request, fused with the calls of the same turn, records and rollups in a few batch scripts', async (t) => {
  const server = await redisProcess(t);
  const s = new RedisStore({ url: server.url, prefix: 'b:' });
  t.teardown(() => s.close());
  const admin = new Redis(server.url);
  t.teardown(() => admin.quit());
  const limits = { rpm: 10_000, tpm: 10_000_000, concurrency: 1000 };
  // Redis learns the scripts (a fresh server answers NOSCRIPT once per script) before the count starts.
  const warm = await s.admit(admitReq(limits, T0, { keyId: 'warm' }));
  if (warm.ok) await s.settle(record({ key_id: 'warm', request_id: warm.admission.requestId }), warm.admission, limits);
  await s.flush();
  await admin.config('RESETSTAT');
  const settled = await Promise.all(Array.from({ length: 300 }, async (_, i) => {
    const a = await s.admit(admitReq(limits, T0 + i, { keyId: 'batch', estimatedTokens: 20 }));
    if (!a.ok) throw new Error('refused');
    return s.settle(record({ key_id: 'batch', request_id: a.admission.requestId, time: T0 + 10 + i, input_tokens: 7, output_tokens: 3, cost: 0.001 }), a.admission, limits);
  }));
  t.ok(settled.every((r) => r.recorded));
  await sleep(BATCH_MS * 3);
  const calls = await commandCalls(admin);
  const scripts = (calls.evalsha ?? 0) + (calls.eval ?? 0);
  // Each set of scripts fused together is a script of its own, which a fresh server learns once (NOSCRIPT, then EVAL);
  // so is each batch script, which goes alone (fuse.ts ALONE_ARGS): at most four sets and the two batch scripts.
  t.ok((calls.eval ?? 0) <= 6, `new sets of fused scripts loaded once: ${calls.eval ?? 0} EVAL`);
  // The 300 admits start in one turn and go as ~15 calls; the settles follow as the admits are answered.
  t.ok(scripts >= 2 && scripts <= 60, `600 scripts of the requests and the batch's, fused into ${scripts} script calls`);
  // The settlements of one turn add the key's spend and its three windows once (settle.lua's settle_many), and the
  // rollups, seven counters in five hashes, go per batch: far fewer HINCRBY than requests.
  const hincrby = calls.hincrby ?? 0;
  t.ok(hincrby >= 4 && hincrby <= 150, `${hincrby} HINCRBY for 300 requests: per turn and per batch, not per request`);
  // The settle markers are fields of a hash per key and admission minute, written once a turn, not a key per request.
  t.equal(calls.set ?? 0, 0, 'no SET: no key per settle marker');
  const hset = calls.hset ?? 0;
  t.ok(hset >= 1 && hset <= 150, `${hset} HSET for 300 settle markers (and the batch's records)`);
  t.equal(Object.keys(await admin.hgetall(`b:{k:batch}:mk:${Math.floor(T0 / MINUTE)}`)).length, 300, 'a marker per request');
  // Summed once per turn, still exact: 300 × 0.001 USD in nano-dollars, in the total and every window.
  const acct = await admin.hgetall('b:{k:batch}:acct');
  t.strictSame([acct.spend, acct.u5h, acct.u1d, acct.u7d], ['300000000', '300000000', '300000000', '300000000']);
  t.strictSame([acct.s5h, acct.s1d, acct.s7d].map(Number), Array(3).fill(T0 + 10), 'the windows start at the first settlement');
  const u = await s.keyUsage('batch', { days: 1, now: T0 + MINUTE });
  t.equal(u.total.requests, 300);
  t.equal(u.total.input_tokens, 2100);
  t.equal(u.total.cost, 0.3);
  t.equal((await s.records({ key: 'batch', limit: 1000 })).records.length, 300);
  t.equal((await s.usageBuckets('minute', T0, T0)).at(0)?.usage.at(0)?.requests, 300, 'the global rollup too');
});

const MINUTE = 60_000;

/** A store on a redis-server of the test's own, and the store's batch. */
async function batchStore(t: Test, prefix: string, options: Partial<RedisStoreOptions> = {}) {
  const server = await redisProcess(t);
  const s = new RedisStore({ url: server.url, prefix, ...options });
  t.teardown(() => s.close());
  return { server, s, batch: (s as unknown as { batch: SettleBatch }).batch };
}

/** Adds record `id` of key `key` (one input token, at T0) to `batch`, as settle.lua would have let it through. */
const addOne = (batch: SettleBatch, key: string, id: string) =>
  batch.add(record({ key_id: key, request_id: id, time: T0, input_tokens: 1 }), JSON.stringify({ request_id: id, time: T0 }), T0 / MINUTE);

t.test('a process that dies before its batch is written loses those records, never what the limits counted', async (t) => {
  const server = await redisProcess(t);
  const dying = new Redis(server.url);
  const a = new RedisStore({ client: dying, prefix: 'c:' });
  const limits = { quota_usd: 1, tpm: 1000 };
  const adm = await a.admit(admitReq(limits, T0, { keyId: 'crash', estimatedTokens: 10 }));
  if (!adm.ok) return t.fail('refused');
  t.strictSame(await a.settle(record({ key_id: 'crash', request_id: adm.admission.requestId, time: T0 + 5, input_tokens: 600, cost: 1 }), adm.admission, limits), { recorded: true });
  dying.disconnect(); // the process is gone before BATCH_MS passed
  const b = new RedisStore({ url: server.url, prefix: 'c:' });
  t.teardown(() => b.close());
  await sleep(BATCH_MS * 2);
  t.strictSame(await b.admit(admitReq(limits, T0 + 10, { keyId: 'crash' })), { ok: false, reason: 'quota_exhausted' }, 'the spend was counted at once');
  t.strictSame(await b.admit(admitReq({ tpm: 1000 }, T0 + 10, { keyId: 'crash', estimatedTokens: 401 })), { ok: false, reason: 'tpm', retryAfterMs: MINUTE - 10 }, 'and the tokens');
  t.equal((await b.records({ key: 'crash', limit: 10 })).records.length, 0, 'the record of the unsent batch is lost');
});

t.test('a batch Redis did not take is written again, once, when Redis answers', async (t) => {
  const server = await redisProcess(t);
  const errors: { message: string; waiting: number }[] = [];
  const s = new RedisStore({ url: server.url, prefix: 'r:', commandTimeoutMs: 200, onBatchError: (err, waiting) => errors.push({ message: err.message, waiting }) });
  t.teardown(() => s.close());
  t.strictSame(await s.settle(record({ key_id: 'retry', request_id: 'r-1', time: T0, input_tokens: 5, cost: 0.5 }), undefined, {}), { recorded: true });
  server.pause(); // the batch is sent into a Redis that does not answer within the timeout
  await sleep(BATCH_MS + 400);
  t.ok(errors.length >= 1 && errors[0].waiting === 1, `the failed write was reported with the record still waiting: ${JSON.stringify(errors)}`);
  server.resume(); // Redis now runs the first write it was sent as well as the retry
  await sleep(1500);
  const u = await s.keyUsage('retry', { days: 1, now: T0 });
  t.equal(u.total.requests, 1, 'counted once though written twice');
  t.equal(u.total.cost, 0.5);
  t.equal((await s.usageBuckets('day', T0, T0))[0].usage[0].requests, 1, 'the global rollup once too');
});

t.test('records that waited out an outage go in calls of at most 1000 records, every one written', async (t) => {
  const errors: number[] = [];
  const { server, s, batch } = await batchStore(t, 'o:', { commandTimeoutMs: 200, onBatchError: (_err, waiting) => errors.push(waiting) });
  server.pause();
  // As settle.lua would have let through before Redis stopped answering: 2500 records of one key and minute.
  for (let i = 0; i < 2500; i++) addOne(batch, 'out', `o-${i}`);
  await batch.flush().catch(() => {});
  await batch.flush().catch(() => {});
  t.ok(errors.length >= 1 && batch.size === 2500, `all 2500 still waiting after the failed writes (${batch.size})`);
  server.resume(); // it also runs the writes it was sent while paused
  await sleep(300);
  await server.query((r) => r.config('RESETSTAT'));
  await batch.flush();
  t.equal(batch.size, 0);
  const calls = await server.query((r) => commandCalls(r));
  // 3 writes of at most 1000 records for the key and 3 for the global index (more if a retry timer also fired); a
  // key's write and the index's that are small enough together share a call (lua/fuse.ts).
  t.ok(calls.evalsha >= 3 && calls.evalsha <= 12, `${calls.evalsha} calls for 2 groups of 2500 records`);
  t.equal((await s.keyUsage('out', { days: 1, now: T0 })).total.requests, 2500, 'each counted once');
  t.equal(await server.query((r) => r.hget('o:{k:out}:lg', '#')), '2500', 'every record kept');
  t.equal(await server.query((r) => r.zcard('o:{k:out}:lgi')), 3, 'in chunks of at most 1000');
});

t.test('while Redis does not answer, settlements do not each start a write: the next try waits its time', async (t) => {
  const errors: number[] = [];
  const { server, s, batch } = await batchStore(t, 'w:', { commandTimeoutMs: 200, onBatchError: (_err, waiting) => errors.push(waiting) });
  const add = (i: number) => addOne(batch, 'wait', `w-${i}`);
  server.pause();
  const start = Date.now();
  // A full batch goes at once and fails when the call times out (200 ms); the next try is a second after that.
  for (let i = 0; i < 1000; i++) add(i);
  // Settlements keep coming, each with more than a batch waiting: none of them may start a write of its own.
  for (let i = 1000; i < 1070; i++) {
    add(i);
    await sleep(10);
  }
  await sleep(Math.max(0, 900 - (Date.now() - start)));
  t.equal(errors.length, 1, `one failed write in the first 900 ms, not one per settlement after it: ${JSON.stringify(errors)}`);
  t.ok(errors[0] >= 1000 && errors[0] <= 1070, `with the records then waiting (${errors[0]})`);
  server.resume(); // it also runs the write it was sent while paused
  await sleep(300);
  await batch.flush();
  t.equal(batch.size, 0);
  t.equal((await s.keyUsage('wait', { days: 1, now: T0 })).total.requests, 1070, 'every record written, once');
});

t.test('settlements that keep coming while a full batch is written wait for the next batch: no write per round trip', async (t) => {
  const { server, s, batch } = await batchStore(t, 'f:');
  const add = (i: number) => addOne(batch, 'full', `f-${i}`);
  // The batch's scripts are known to Redis (a fresh server answers NOSCRIPT once per script) before the count starts.
  add(-1);
  await batch.flush();
  await server.query((r) => r.config('RESETSTAT'));
  server.pause(); // the full batch's write stays in flight until Redis resumes
  for (let i = 0; i < 1100; i++) add(i);
  await sleep(20);
  server.resume();
  // A load that does not pause: 25 settlements a turn for 40 turns, while the writes are answered.
  for (let turn = 0; turn < 40; turn++) {
    for (let i = 0; i < 25; i++) add(1100 + turn * 25 + i);
    await sleep(1);
  }
  await batch.flush();
  t.equal(batch.size, 0);
  const calls = await server.query((r) => commandCalls(r));
  // The full batch, what waited behind it, and the rest within BATCH_MS: a few writes of a key's chunk and the global
  // log's each. Before, every write was followed at once by another of what came during it, as long as the load went on.
  const scripts = (calls.evalsha ?? 0) + (calls.eval ?? 0);
  t.ok(scripts >= 4 && scripts <= 14, `${scripts} script calls for 2100 records (58 before this rule)`);
  t.equal((await s.keyUsage('full', { days: 1, now: T0 })).total.requests, 2101, 'every record written, once');
});

t.test('records with text beyond ASCII go through a batch byte for byte (its text is sent as UTF-8 bytes)', async (t) => {
  const { s, batch } = await batchStore(t, 'u:');
  const names = ['modèle-ß', '模型-中', 'note-𝄞-😀', 'line\u2028sep', 'quote"back\\slash\ttab'];
  const sent = names.map((model, i) => record({ key_id: 'utf', request_id: `u-${i}`, time: T0 + i, model, upstream_model: `${model}-up` }));
  for (const r of sent) batch.add(r, JSON.stringify(r), T0 / MINUTE);
  await batch.flush();
  const got = (await s.records({ key: 'utf', limit: 10 })).records;
  t.strictSame(got.map((r) => [r.request_id, r.model, r.upstream_model]).reverse(), sent.map((r) => [r.request_id, r.model, r.upstream_model]));
  t.strictSame((await s.records({ limit: 10 })).records.map((r) => r.model).reverse(), names, 'the global log too');
  const u = await s.keyUsage('utf', { days: 1, now: T0 });
  t.strictSame(u.models.map((m) => m.model).sort(), [...names].sort(), 'and the rollups per model');
});

t.test('2300 records of one key and minute, each ~0.9 KB, added at once: chunks of at most 1000, kept byte for byte, summed per key and globally', async (t) => {
  const { server, s, batch } = await batchStore(t, 'p:');
  // The text of 2300 such records outgrows the batch's first buffer (256 KB) several times over.
  const pad = 'é模'.repeat(200);
  const sent = Array.from({ length: 2300 }, (_, i) => record({
    key_id: 'parts', request_id: `p-${String(i).padStart(4, '0')}`, time: T0 + i, input_tokens: i, output_tokens: 1, cost: 0.001,
    upstream_model: `up-${i}-${pad}`,
  }));
  for (const r of sent) batch.add(r, JSON.stringify(r), T0 / MINUTE);
  await batch.flush();
  t.equal(batch.size, 0);
  t.equal(await server.query((r) => r.hget('p:{k:parts}:lg', '#')), '2300', 'every record kept');
  t.equal(await server.query((r) => r.zcard('p:{k:parts}:lgi')), 3, 'in chunks of at most 1000');
  const u = await s.keyUsage('parts', { days: 1, now: T0 + MINUTE });
  t.strictSame([u.total.requests, u.total.input_tokens, u.total.output_tokens, u.total.cost], [2300, 2300 * 2299 / 2, 2300, 2.3], 'the key rollups, exact');
  t.equal((await s.usageBuckets('minute', T0, T0))[0].usage[0].requests, 2300, 'the global rollup');
  const newest = (await s.records({ key: 'parts', limit: 500 })).records;
  t.strictSame(newest, sent.slice(-500).reverse(), 'the newest 500 read back as sent');
  const global = (await s.records({ limit: 500 })).records;
  t.strictSame(global, sent.slice(-500).reverse(), 'and from the global log');
});

t.test('a settlement sent again (settle.lua answered 2) before or after its record was written: kept and counted once, per key and in the global log', async (t) => {
  const { server, s, batch } = await batchStore(t, 'd:');
  const twice = record({ key_id: 'dup', request_id: 'd-1', time: T0, input_tokens: 4, cost: 0.25 });
  const minute = T0 / MINUTE;
  // Marked settled ('d') as settle.lua would have; the batch marks a record kept ('k') when it writes it.
  await server.query((r) => r.hset(`d:{k:dup}:mk:${minute}`, 'd-1', 'd', 'd-2', 'd', 'd-3', 'd'));
  batch.add(twice, JSON.stringify(twice), minute);
  batch.add({ ...twice, input_tokens: 99 }, JSON.stringify(twice), minute, true);
  const other = record({ key_id: 'dup', request_id: 'd-2', time: T0 + 1, input_tokens: 1 });
  batch.add(other, JSON.stringify(other), minute);
  // A repeat of a settlement whose first answer was lost: its record never reached the batch, so it is written.
  const lost = record({ key_id: 'dup', request_id: 'd-3', time: T0 + 2, input_tokens: 10 });
  batch.add(lost, JSON.stringify(lost), minute, true);
  await batch.flush();
  batch.add(twice, JSON.stringify(twice), minute, true);
  batch.add(lost, JSON.stringify(lost), minute, true);
  await batch.flush();
  t.equal(batch.size, 0);
  const u = await s.keyUsage('dup', { days: 1, now: T0 });
  t.equal(u.total.requests, 3);
  t.equal(u.total.input_tokens, 15);
  t.strictSame((await s.records({ key: 'dup', limit: 10 })).records.map((r) => r.request_id), ['d-3', 'd-2', 'd-1']);
  t.equal((await s.records({ limit: 10 })).records.length, 3, 'the global log');
  t.equal((await s.usageBuckets('minute', T0, T0))[0].usage[0].requests, 3, 'the global rollup');
  t.strictSame(await server.query((r) => r.hmget(`d:{k:dup}:mk:${minute}`, 'd-1', 'd-2', 'd-3')), ['k', 'k', 'k'], 'each marked kept');
});

t.test('a settlement whose answer was lost (Redis ran it after the call timed out) sent again: its record is kept, counted once', async (t) => {
  const server = await redisProcess(t);
  const s = new RedisStore({ url: server.url, prefix: 'l:', commandTimeoutMs: 300 });
  t.teardown(() => s.close());
  const limits = { tpm: 100_000 };
  const adm = await s.admit(admitReq(limits, T0, { keyId: 'lost', estimatedTokens: 10 }));
  if (!adm.ok) return t.fail('refused');
  const r = record({ key_id: 'lost', request_id: adm.admission.requestId, time: T0 + 5, input_tokens: 40, cost: 0.25 });
  // Redis knows the script already (a server that answered NOSCRIPT would run nothing).
  await s.settle(record({ key_id: 'warm' }), undefined, {});
  server.pause();
  await t.rejects(s.settle(r, adm.admission, limits), /timed out/, 'the call times out while Redis is paused');
  server.resume();
  // Redis carries the command out when it resumes: the marker is set, the spend counted, the answer gone.
  const acct = `l:{k:lost}:acct`;
  for (let i = 0; i < 50 && !(await server.query((c) => c.hget(acct, 'spend'))); i++) await sleep(20);
  t.equal(await server.query((c) => c.hget(acct, 'spend')), '250000000', 'Redis ran the first call');
  // The gateway holds it and sends it again (core/store/guard.ts).
  t.strictSame(await s.settle(r, adm.admission, limits), { recorded: false }, 'not counted against the limits again');
  await s.flush();
  const kept = (await s.records({ key: 'lost', limit: 10 })).records;
  t.strictSame(kept.map((k) => k.request_id), [r.request_id], 'the record is kept');
  const u = await s.keyUsage('lost', { days: 1, now: T0 + MINUTE });
  t.strictSame([u.total.requests, u.total.input_tokens, u.total.cost], [1, 40, 0.25], 'counted once in the rollups');
  t.equal(await server.query((c) => c.hget(acct, 'spend')), '250000000', 'and the spend once');
  t.strictSame(await s.settle(r, adm.admission, limits), { recorded: false }, 'a third time: the kept record says it was settled');
  await s.flush();
  t.equal((await s.keyUsage('lost', { days: 1, now: T0 + MINUTE })).total.requests, 1);
});
