// Builders shared by the store contract suite: records, admissions, issued keys, a fixed clock.
import type tap from 'tap';
import type { AdmitRequest, IssuedKey, KeyLimits, Store, UsageRecord } from '../../core/store/types.ts';
import type { StoreOptions } from '../../core/store/options.ts';
import type { MemoryRecordIndex } from '../../core/store/memory/record-index.ts';

export type Tap = Parameters<Parameters<typeof tap.test>[0]>[0];
/** Makes a fresh, empty store (options: retention and caps, for the tests that need small ones). */
export type MakeStore = (options?: StoreOptions) => Promise<Store>;

/** 2025-01-15T10:00:00Z: on a minute boundary, mid-day, so windows and buckets are easy to reason about. */
export const T0 = Date.UTC(2025, 0, 15, 10, 0, 0);
export const MIN = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

let seq = 0;
export const uid = (p = 'r'): string => `${p}-${process.pid}-${++seq}`;

export function record(over: Partial<UsageRecord> = {}): UsageRecord {
  return {
    request_id: over.request_id ?? uid(),
    time: T0,
    key_id: 'k1',
    group: 'g1',
    platform: 'sim',
    account: 'acct-1',
    route: '/v1/messages',
    model: 'claude-x',
    upstream_model: 'claude-x-upstream',
    stream: true,
    status: 200,
    ending: 'completed',
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
    cost: 0,
    duration_ms: 10,
    ttft_ms: null,
    ...over,
  };
}

export function admitReq(limits: KeyLimits, now: number, over: Partial<AdmitRequest> = {}): AdmitRequest {
  return { keyId: 'k1', requestId: uid(), now, limits, estimatedTokens: 0, leaseMs: 30_000, ...over };
}

export function issued(over: Partial<IssuedKey> = {}): IssuedKey {
  const id = over.id ?? uid('key');
  return {
    id, sha256: over.sha256 ?? `sha-${id}`, group: 'g1', pools: ['p1'], limits: { rpm: 10 }, disabled: false,
    created_at: T0, ...over,
  };
}

/** Counts calls of `listener`; `until(n)` waits for the n-th call and fails after `ms` (a missed notice). */
export function callCounter(ms = 3000): { listener: () => void; count: () => number; until: (n: number) => Promise<void> } {
  let n = 0;
  let wake: (() => void)[] = [];
  return {
    listener: () => { n++; for (const w of wake) w(); wake = []; },
    count: () => n,
    until: async (target) => {
      const deadline = Date.now() + ms;
      while (n < target) {
        if (Date.now() > deadline) throw new Error(`listener called ${n} times, expected ${target}`);
        await new Promise<void>((r) => { wake.push(r); setTimeout(r, 50).unref(); });
      }
    },
  };
}

/** A store for one test, closed at its end. */
export async function open(t: Tap, make: MakeStore, options?: StoreOptions): Promise<Store> {
  const s = await make(options);
  t.teardown(() => s.close());
  return s;
}

/** A record's entry in a memory or file store's global index (a field the class keeps to itself). */
/** The global index's entry of a kept record (found by its time, as the index finds it). */
export async function globalEntry(s: Store, id: string) {
  const global = (s as unknown as { global: MemoryRecordIndex }).global;
  const found = (await global.page(Infinity, -Infinity, 0, Number.MAX_SAFE_INTEGER)).find((e) => e.id === id);
  return found && global.entry(found.score, found.id);
}
