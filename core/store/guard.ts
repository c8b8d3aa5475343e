// A shared store (Redis) seen from the gateway when it fails: any store call that fails (Redis down, a command past
// store.timeout_ms) becomes the gateway's own 503 STORE_UNAVAILABLE in the client's format, and a settlement that fails
// waits in an outbox, retried until the store takes it (settle is idempotent by request id): an outage loses no usage.
import type { Logger } from 'pino';
import { GatewayError } from '../errors.ts';
import { checkSettleArgs } from './settle-args.ts';
import type { Admission, KeyLimits, Store, UsageRecord } from './types.ts';

/** Settlements held at most; past it the oldest is dropped (logged), so an endless outage cannot exhaust memory. */
export const OUTBOX_LIMIT = 100_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
/** At shutdown the outbox gets this long to drain before what is left is logged as lost. */
const CLOSE_FLUSH_MS = 5_000;
/** One failure log line per this long, however many requests fail meanwhile. */
const LOG_EVERY_MS = 10_000;

const CODE = 'STORE_UNAVAILABLE';

/**
 * What of a store error may be logged: ioredis puts the failed command's arguments on its errors (`err.command.args`),
 * and those of AUTH or HELLO hold the Redis password.
 */
export function redisError(err: unknown): { name?: string; message: string; code?: string } {
  const e = err as { name?: string; message?: string; code?: string };
  return { name: e?.name, message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}

/** True for the error a failed store call becomes: the request was refused before any upstream was asked. */
export const isStoreUnavailable = (err: unknown): boolean => err instanceof GatewayError && err.code === CODE;

export const storeUnavailable = () =>
  new GatewayError(503, CODE, 'The gateway cannot reach its store (limits, accounts, usage); retry shortly', {
    headers: { 'retry-after': '1' },
  });

interface Pending { record: UsageRecord; admission: Admission | undefined; limits: KeyLimits }

/** The store with failures turned into 503s and settlements kept until they land (counted by pendingSettlements). */
export function guardStore(inner: Store, log: Logger, limit = OUTBOX_LIMIT): Store {
  const outbox: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;
  let flushing: Promise<boolean> | undefined;
  let loggedAt = -Infinity;

  const report = (err: unknown, what: string) => {
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return;
    loggedAt = now;
    log.error({ err: redisError(err), pending_settlements: outbox.length }, `store unavailable (${what}): answering 503 STORE_UNAVAILABLE, holding settlements`);
  };
  const fail = (name: string) => (err: unknown): never => {
    if (err instanceof GatewayError) throw err;
    report(err, name);
    throw storeUnavailable();
  };

  /** Any call that succeeds says the store is back: held settlements go at once rather than at the next retry. */
  const answered = <T>(value: T): T => {
    if (outbox.length && timer && !flushing) {
      clearTimeout(timer);
      timer = undefined;
      delay = 0;
      schedule();
    }
    return value;
  };

  /** Tries the held settlements in order; true when none is left. */
  async function flush(): Promise<boolean> {
    while (outbox.length) {
      const batch = outbox.slice(0, 100);
      const results = await Promise.allSettled(batch.map((p) => inner.settle(p.record, p.admission, p.limits)));
      // Up to the first failure they are written; any after it are tried again (a repeat is recognised, never counted).
      const failed = results.findIndex((r) => r.status === 'rejected');
      outbox.splice(0, failed === -1 ? batch.length : failed);
      if (failed !== -1) { report((results[failed] as PromiseRejectedResult).reason, 'settle retry'); return false; }
    }
    return true;
  }

  function schedule(): void {
    if (timer || flushing) return;
    timer = setTimeout(() => {
      timer = undefined;
      flushing = flush().finally(() => { flushing = undefined; });
      flushing.then((done) => {
        if (done) {
          log.info('store reachable again: every held settlement recorded');
          delay = FIRST_RETRY_MS;
        } else {
          delay = Math.min(MAX_RETRY_MS, Math.max(FIRST_RETRY_MS, delay * 2));
          schedule();
        }
      }, () => {});
    }, delay).unref();
  }

  async function settle(record: UsageRecord, admission: Admission | undefined, limits: KeyLimits): Promise<{ recorded: boolean; held?: boolean }> {
    checkSettleArgs(record, admission); // a malformed record is an error now, not a held one that blocks the rest
    // Behind held ones, so a key's settlements land in the order they were made.
    if (!outbox.length) {
      try {
        return await inner.settle(record, admission, limits);
      } catch (err) {
        report(err, 'settle');
      }
    }
    if (outbox.length >= limit) {
      const lost = outbox.shift()!;
      log.error({ req_id: lost.record.request_id, key_id: lost.record.key_id }, 'settlement outbox full: the oldest held settlement is dropped');
    }
    outbox.push({ record, admission, limits });
    schedule();
    return { recorded: false, held: true };
  }

  async function close(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (outbox.length) {
      await flushing;
      const done = await Promise.race([flush(), new Promise<false>((r) => setTimeout(r, CLOSE_FLUSH_MS, false).unref())]);
      if (!done && outbox.length) {
        log.error({ lost: outbox.length, req_ids: outbox.slice(0, 20).map((p) => p.record.request_id) }, 'store still unreachable at shutdown: held settlements are lost');
      }
    }
    await inner.close();
  }

  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(inner, {
    get(target, name) {
      if (name === 'settle') return settle;
      if (name === 'close') return close;
      if (name === 'pendingSettlements') return () => outbox.length;
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      let fn = wrapped.get(name);
      if (!fn) {
        const onError = fail(String(name));
        fn = (...args: unknown[]) => {
          const result: unknown = value.apply(target, args);
          return result instanceof Promise ? result.then(answered, onError) : result;
        };
        wrapped.set(name, fn);
      }
      return fn;
    },
  });
}
