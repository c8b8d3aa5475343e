// Store round trips per request on Redis: with a limited key (rate-limit), metering and an account pool, a request
// costs one round trip to Redis before the upstream call (admission, binding lookup, account decision) and one after
// (account slot back with its success and bindings, settlement), plus the write of its record and rollups, which a
// process sends for everything it settled in 100 ms at once (redis/batch.ts; a lone request here has one to itself).
// A counting TCP proxy sits between the gateway and
// Redis: a round trip is a burst of gateway → Redis bytes that follows Redis's last answer on that connection.
import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { chatConfig, withGateway } from '../helpers/gateway.ts';
import { frontProxy } from '../helpers/upstream.ts';
import { redisProcess } from '../helpers/redis-process.ts';
import { keptInRedis } from '../helpers/redis-records.ts';
import { RedisStore } from '../../core/store/redis/store.ts';

const KEY = 'sk-round-trips-0001';

t.test('one Redis round trip before the upstream call and one after', async (t) => {
  // A Redis of its own: another test flushing or restarting a shared one would add script loads to the count.
  const { url: redisUrl } = await redisProcess(t);
  const prefix = 'gwtest:rt:';

  // ---- gateway → Redis: count round trips ----
  let trips = 0;
  const sockets = new Set<Socket>();
  const tcp = createServer((client) => {
    const target = new URL(redisUrl);
    const server = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(server);
    let answered = true; // a connection's first bytes start a round trip
    client.on('data', (chunk) => { if (answered) trips++; answered = false; server.write(chunk); });
    server.on('data', (chunk) => { answered = true; client.write(chunk); });
    const end = () => { client.destroy(); server.destroy(); };
    client.once('close', end).once('error', end);
    server.once('close', end).once('error', end);
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); tcp.close(() => resolve()); }));
  const viaProxy = `redis://127.0.0.1:${(tcp.address() as AddressInfo).port}`;

  // ---- the upstream: the simulator, behind a proxy that notes the round trips made when each request arrives ----
  const sim = await startSimulator();
  t.teardown(() => sim.close());
  const atUpstream: number[] = [];
  const upstreamUrl = await frontProxy(t, () => sim.url, () => { atUpstream.push(trips); });

  const gateway = await withGateway(t, chatConfig({
    keyId: 'limited', key: KEY, accounts: 2, limits: 'rpm: 1000, tpm: 1000000, concurrency: 10, quota_usd: 100, usd_1d: 50',
    store: `redis: "${viaProxy}", prefix: "${prefix}"`,
    platform: `{ base_url: "${upstreamUrl}", auth: bearer, format: [openai-chat, openai-responses] }`,
    routes: '  - { method: POST, path: /v1/responses, format: openai-responses, pipeline: relay }',
  }));
  const direct = new Redis(redisUrl);
  t.teardown(() => direct.quit());

  /** Sends one request and counts the round trips before the upstream saw it and after, until the ledger has it. */
  async function measure(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    await sleep(50); // nothing else in flight
    const start = trips;
    const seen = atUpstream.length;
    const res = await fetch(gateway.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
      body: JSON.stringify(body),
    });
    const id = res.headers.get('x-request-id')!; // the record is kept under the gateway's own id
    const text = await res.text();
    t.equal(res.status, 200, `${path}: 200`);
    for (let i = 0; i < 100 && !(await keptInRedis(direct, prefix, 'limited', id)); i++) await sleep(20);
    await sleep(100); // anything sent late would be counted too
    t.equal(atUpstream.length, seen + 1, 'one upstream request');
    return { id, before: atUpstream[seen] - start, after: trips - atUpstream[seen], text };
  }

  const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there, world!' }] };
  // The first request loads the store's scripts into Redis: counted apart, the steady state is what is measured.
  await measure('/v1/chat/completions', chat, { 'x-claude-code-session-id': `warm-${randomUUID()}` });
  const session = { 'x-claude-code-session-id': `s-${randomUUID()}` };
  const fresh = await measure('/v1/chat/completions', chat, session);
  // After: the slot, binding and settlement in one, and the batch's two writes of the record (the key's log, then the
  // global log's: shared by every request of 100 ms under load, alone here).
  t.strictSame([fresh.before, fresh.after], [1, 3], 'a new session: 1 before (admission + lookup + account), 1 after (slot, binding + settlement) + the batch\'s 2');
  const sticky = await measure('/v1/chat/completions', chat, session);
  t.strictSame([sticky.before, sticky.after], [1, 3], 'a bound session: the same');
  const streamed = await measure('/v1/chat/completions', { ...chat, stream: true, stream_options: { include_usage: true } }, session);
  t.strictSame([streamed.before, streamed.after], [1, 3], 'a stream: the same');
  t.match(streamed.text, /data: \[DONE\]/);

  const created = await measure('/v1/responses', { model: 'gpt-4o-mini', input: 'Hello there, world!' });
  t.strictSame([created.before, created.after], [1, 3], 'a Responses answer: its id pinned with the slot going back');
  const id = (JSON.parse(created.text) as { id: string }).id;
  const next = await measure('/v1/responses', { model: 'gpt-4o-mini', input: 'And then?', previous_response_id: id });
  t.strictSame([next.before, next.after], [1, 3], 'continuing it: the pin looked up in the account decision');

  const reader = new RedisStore({ client: direct, prefix });
  t.teardown(() => reader.close());
  const records = new Map((await reader.records({ key: 'limited', limit: 100 })).records.map((r) => [r.request_id, r]));
  t.equal(records.size, 6, 'every request settled once');
  const account = (r: { id: string }) => records.get(r.id)!.account;
  // With two idle accounts, least-recently-used alternates: only the bindings keep these on one account.
  t.equal(account(sticky), account(fresh), 'the session stayed on its account');
  t.equal(account(streamed), account(fresh), 'the stream too');
  t.equal(account(next), account(created), 'the continued conversation went to the account it is pinned to');
});
