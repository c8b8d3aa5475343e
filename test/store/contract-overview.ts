// Contract: what the operator's console reads: the gateway-wide rollup buckets (usage by key, group and model; failed
// attempts by account) and record listings filtered by status and ending.
import type { UsageBucket, UsageRecord } from '../../core/store/types.ts';
import { HOUR, MIN, T0, open, record, type MakeStore, type Tap } from './fixtures.ts';

const EMPTY = (start: number): UsageBucket => ({ start, usage: [], attempts: [] });

export function overviewContract(t: Tap, make: MakeStore): void {
  t.test('usage buckets: per minute, hour and day, by key, group and model, with errors, tokens and exact cost', async (t) => {
    const s = await open(t, make);
    const rs: UsageRecord[] = [
      record({ key_id: 'k1', group: 'g1', model: 'm-a', time: T0 + 5_000, input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, cache_write_tokens: 1, cost: 0.000000123 }),
      record({ key_id: 'k1', group: 'g1', model: 'm-a', time: T0 + 30_000, input_tokens: 1, output_tokens: 1, cost: 0.1 }),
      record({ key_id: 'k1', group: 'g1', model: 'm-a', time: T0 + 40_000, status: 502, ending: 'failed' }),
      record({ key_id: 'k2', group: 'g2', model: 'm "b"|:x', time: T0 + 61_000, status: 200, ending: 'timeout', output_tokens: 3, cost: 0.5 }),
      record({ key_id: 'k2', group: 'g2', model: 'm "b"|:x', time: T0 + 2 * HOUR, ending: 'disconnected', output_tokens: 4 }),
    ];
    for (const r of rs) await s.settle(r, undefined, {});
    await s.settle(rs[1], undefined, {}); // a repeated settlement counts once

    const minutes = await s.usageBuckets('minute', T0 - MIN, T0 + 90_000);
    t.strictSame(minutes, [
      EMPTY(T0 - MIN),
      { start: T0, usage: [{ key: 'k1', group: 'g1', model: 'm-a', requests: 3, errors: 1, tokens: 20, cost: 0.100000123 }], attempts: [] },
      { start: T0 + MIN, usage: [{ key: 'k2', group: 'g2', model: 'm "b"|:x', requests: 1, errors: 1, tokens: 3, cost: 0.5 }], attempts: [] },
    ], 'every minute from the one holding from to the one holding to, empty ones included; a timeout is an error');

    const hours = await s.usageBuckets('hour', T0, T0 + 2 * HOUR + 1);
    t.equal(hours.length, 3);
    t.strictSame(hours.map((h) => h.start), [T0, T0 + HOUR, T0 + 2 * HOUR]);
    t.equal(hours[0].usage.length, 2, 'two key/group/model combinations in the first hour');
    t.strictSame(hours[1], EMPTY(T0 + HOUR));
    t.strictSame(hours[2].usage, [{ key: 'k2', group: 'g2', model: 'm "b"|:x', requests: 1, errors: 0, tokens: 4, cost: 0 }], 'a client that left is no error');

    const [day] = await s.usageBuckets('day', T0, T0);
    t.equal(day.start, Date.UTC(2025, 0, 15), 'a UTC day');
    const k1 = day.usage.find((u) => u.key === 'k1')!;
    t.strictSame(k1, { key: 'k1', group: 'g1', model: 'm-a', requests: 3, errors: 1, tokens: 20, cost: 0.100000123 });
    t.equal(day.usage.reduce((n, u) => n + u.requests, 0), 5);
  });

  t.test('usage buckets: consecutive records that differ only in model, group or key are each counted under their own', async (t) => {
    const s = await open(t, make);
    const seq: [string, string, string][] = [['k1', 'g1', 'm-a'], ['k1', 'g1', 'm-b'], ['k1', 'g1', 'm-a'], ['k1', 'g2', 'm-a'], ['k2', 'g2', 'm-a'], ['k2', 'g2', 'm-a']];
    for (const [i, [key_id, group, model]] of seq.entries()) await s.settle(record({ key_id, group, model, time: T0 + i * 1000, output_tokens: 1 }), undefined, {});
    const [bucket] = await s.usageBuckets('minute', T0, T0);
    const counted = Object.fromEntries(bucket.usage.map((u) => [`${u.key}/${u.group}/${u.model}`, u.requests]));
    t.strictSame(counted, { 'k1/g1/m-a': 2, 'k1/g1/m-b': 1, 'k1/g2/m-a': 1, 'k2/g2/m-a': 2 });
  });

  t.test('usage buckets: failed attempts by group, account and reason, and the failovers among them', async (t) => {
    const s = await open(t, make);
    await s.settle(record({ time: T0, group: 'g1', account: 'b', attempts: [
      { account: 'a', status: 429, reason: 'rate_limited' }, { account: 'c', status: 0, reason: 'unreachable' }, { account: 'b', status: 200, reason: 'ok' },
    ] }), undefined, {});
    await s.settle(record({ time: T0 + 1000, group: 'g1', account: 'a', status: 502, ending: 'failed', attempts: [
      { account: 'a', status: 500, reason: 'upstream_error' },
    ] }), undefined, {});
    await s.settle(record({ time: T0 + 2000, group: 'g1', account: 'a', status: 400, attempts: [
      { account: 'c', status: 429, reason: 'rate_limited' }, { account: 'a', status: 400, reason: 'client_error' },
    ] }), undefined, {});
    const [b] = await s.usageBuckets('hour', T0, T0);
    t.strictSame(b.attempts, [
      { group: 'g1', account: 'a', reason: 'rate_limited', failures: 1, failovers: 1 },
      { group: 'g1', account: 'a', reason: 'upstream_error', failures: 1, failovers: 0 },
      { group: 'g1', account: 'c', reason: 'rate_limited', failures: 1, failovers: 1 },
      { group: 'g1', account: 'c', reason: 'unreachable', failures: 1, failovers: 1 },
    ], 'ok and client_error attempts are no failures; the last attempt moved nowhere');
    t.equal(b.usage[0].errors, 2, 'the 502 and the 400 are errors');
  });

  t.test('usage buckets: a long range returns at most 1000 buckets, the newest', async (t) => {
    const s = await open(t, make);
    await s.settle(record({ time: T0 }), undefined, {});
    const all = await s.usageBuckets('minute', T0 - 5000 * MIN, T0);
    t.equal(all.length, 1000);
    t.equal(all.at(-1)!.start, T0);
    t.equal(all.at(-1)!.usage[0].requests, 1);
  });

  t.test('records: filtered by status (one or a range) and by ending, paged', async (t) => {
    const s = await open(t, make);
    const statuses = [200, 429, 502, 200, 400, 200, 503];
    for (const [i, status] of statuses.entries()) {
      await s.settle(record({ request_id: `st-${i}`, time: T0 + i * 1000, status, ending: status >= 400 ? 'failed' : i === 3 ? 'disconnected' : 'completed' }), undefined, {});
    }
    const ids = async (f: Parameters<typeof s.records>[0]) => (await s.records(f)).records.map((r) => r.request_id);
    t.strictSame(await ids({ limit: 10, status: { min: 500, max: 599 } }), ['st-6', 'st-2']);
    t.strictSame(await ids({ limit: 10, status: { min: 429, max: 429 } }), ['st-1']);
    t.strictSame(await ids({ limit: 10, ending: 'disconnected' }), ['st-3']);
    t.strictSame(await ids({ limit: 10, key: 'k1', status: { min: 400, max: 599 }, ending: 'failed' }), ['st-6', 'st-4', 'st-2', 'st-1']);
    const first = await s.records({ limit: 2, status: { min: 400, max: 599 } });
    t.strictSame(first.records.map((r) => r.request_id), ['st-6', 'st-4']);
    const second = await s.records({ limit: 2, status: { min: 400, max: 599 }, cursor: first.cursor });
    t.strictSame(second.records.map((r) => r.request_id), ['st-2', 'st-1']);
    t.equal(second.cursor, undefined, 'the last page has no cursor');
  });
}
