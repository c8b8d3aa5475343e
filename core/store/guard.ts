// A shared store (Redis) as the gateway sees it failing: a failed call is a 503 STORE_UNAVAILABLE, and what must land
// (settlements, slots given back, the slot a call with no answer may have taken) waits in an outbox, retried in order.
import type { Logger } from 'pino';
import { defineErrors, GatewayError } from '../errors.ts';
import { checkSettleArgs } from './settle-args.ts';
import type { AccountLease, AcquireAccountRequest, Admission, AdmitRequest, KeyLimits, LeaseEnding, Store, UsageRecord } from './types.ts';
import { admissionOf } from './rules/ledger.ts';
import { positive } from './rules/limits.ts';

/** Held calls at most; past it the oldest is dropped (logged), so an endless outage cannot exhaust memory. */
export const OUTBOX_LIMIT = 100_000;
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
/** At shutdown the outbox gets this long to drain before what is left is logged as lost. */
const CLOSE_FLUSH_MS = 5_000;
/** One failure log line per this long, however many requests fail meanwhile. */
const LOG_EVERY_MS = 10_000;

const CODE = 'STORE_UNAVAILABLE';

/** What of a store error may be logged: not ioredis's `err.command.args` (AUTH's hold the password). */
export function redisError(err: unknown): { name?: string; message: string; code?: string } {
  const e = err as { name?: string; message?: string; code?: string };
  return { name: e?.name, message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}

/** True for the error a failed store call becomes: the request was refused before any upstream was asked. */
export const isStoreUnavailable = (err: unknown): boolean => err instanceof GatewayError && err.code === CODE;

const errors = defineErrors('store', {
  store_unavailable: {
    wire: CODE, status: 503, doc: 'The shared store (Redis) did not answer within `store.timeout_ms`; usage is held and written later.',
    message: 'The gateway cannot reach its store (limits, accounts, usage); retry shortly', headers: { 'retry-after': '1' },
  },
});
export const storeUnavailable = () => errors.store_unavailable();

/** A store call that must land: a settlement, or a slot given back. */
interface Pending { run: () => Promise<unknown>; settlement: boolean; reqId: string; keyId?: string }

/**
 * What to give back when an admission's answer never came (the call may still have been carried out): the admission it
 * would have made. A refusal carried out late then gives back an estimate it never took: bounded by one estimate.
 */
const admissionFor = (req: AdmitRequest): Admission => admissionOf(req, positive(req.limits.concurrency) > 0);

/** The store with failures turned into 503s, and settlements and released slots kept until they land. */
export function guardStore(inner: Store, log: Logger, limit = OUTBOX_LIMIT): Store {
  const outbox: Pending[] = [];
  let heldSettlements = 0;
  let timer: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;
  let flushing: Promise<boolean> | undefined;
  let loggedAt = -Infinity;
  let up = true;

  const report = (err: unknown, what: string) => {
    up = false;
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return;
    loggedAt = now;
    log.error({ err: redisError(err), pending_settlements: heldSettlements, pending_calls: outbox.length }, `store unavailable (${what}): answering 503 STORE_UNAVAILABLE, holding settlements and released slots`);
  };
  const fail = (name: string) => (err: unknown): never => {
    // A refusal of the call's own arguments (a RangeError: an unknown time zone, a malformed conversation) is the caller's.
    if (err instanceof GatewayError || err instanceof RangeError) throw err;
    report(err, name);
    throw storeUnavailable();
  };

  /** Any call that succeeds says the store is back: held settlements go at once rather than at the next retry. */
  const answered = <T>(value: T): T => {
    up = true;
    if (outbox.length && timer && !flushing) {
      clearTimeout(timer);
      timer = undefined;
      delay = 0;
      schedule();
    }
    return value;
  };

  /** Tries the held calls in order; true when none is left. */
  async function flush(): Promise<boolean> {
    while (outbox.length) {
      const batch = outbox.slice(0, 100);
      const results = await Promise.allSettled(batch.map((p) => p.run()));
      // Up to the first failure they are done; any after it are tried again (a repeat is recognised, never counted).
      const failed = results.findIndex((r) => r.status === 'rejected');
      for (const p of outbox.splice(0, failed === -1 ? batch.length : failed)) if (p.settlement) heldSettlements--;
      if (failed !== -1) { report((results[failed] as PromiseRejectedResult).reason, 'retry'); return false; }
    }
    return true;
  }

  /** Keep a call for the store once it answers again (behind what is held already, so each key's calls keep their order). */
  function hold(p: Pending): void {
    if (outbox.length >= limit) {
      const lost = outbox.shift()!;
      if (lost.settlement) heldSettlements--;
      log.error({ req_id: lost.reqId, key_id: lost.keyId }, `store outbox full: the oldest held ${lost.settlement ? 'settlement' : 'slot release'} is dropped`);
    }
    outbox.push(p);
    if (p.settlement) heldSettlements++;
    schedule();
  }

  /** A slot given back must land: when the store cannot take it now, it is held and retried. */
  async function giveBack(run: () => Promise<unknown>, reqId: string, what: string): Promise<void> {
    if (!outbox.length) {
      try {
        await run();
        return;
      } catch (err) {
        report(err, what);
      }
    }
    hold({ run, settlement: false, reqId });
  }

  const release = (admission: Admission) =>
    giveBack(() => inner.release(admission), admission.requestId, 'release');
  const releaseAccount = (lease: AccountLease, ending?: LeaseEnding) =>
    giveBack(() => inner.releaseAccount(lease, ending), lease.requestId, 'releaseAccount');

  /** Calls that take a slot: when the answer never comes, whatever slot the call may still take is given back. */
  async function admit(req: AdmitRequest) {
    try {
      return answered(await inner.admit(req));
    } catch (err) {
      void release(admissionFor(req));
      return fail('admit')(err);
    }
  }
  async function acquireAccount(req: AcquireAccountRequest) {
    try {
      return answered(await inner.acquireAccount(req));
    } catch (err) {
      for (const c of req.candidates) void releaseAccount({ group: req.group, account: c.id, requestId: req.requestId });
      return fail('acquireAccount')(err);
    }
  }

  function schedule(): void {
    if (timer || flushing) return;
    timer = setTimeout(() => {
      timer = undefined;
      flushing = flush().finally(() => { flushing = undefined; });
      flushing.then((done) => {
        if (done) {
          up = true;
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
    hold({ run: () => inner.settle(record, admission, limits), settlement: true, reqId: record.request_id, keyId: record.key_id });
    return { recorded: false, held: true };
  }

  async function close(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (outbox.length) {
      await flushing;
      const done = await Promise.race([flush(), new Promise<false>((r) => setTimeout(r, CLOSE_FLUSH_MS, false).unref())]);
      if (!done && outbox.length) {
        log.error({ lost: outbox.length, req_ids: outbox.slice(0, 20).map((p) => p.reqId) }, 'store still unreachable at shutdown: held settlements and slot releases are lost');
      }
    }
    await inner.close();
  }

  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(inner, {
    get(target, name) {
      if (name === 'settle') return settle;
      if (name === 'release') return release;
      if (name === 'releaseAccount') return releaseAccount;
      if (name === 'admit') return admit;
      if (name === 'acquireAccount') return acquireAccount;
      if (name === 'close') return close;
      if (name === 'pendingSettlements') return () => heldSettlements;
      if (name === 'available') return () => up;
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
