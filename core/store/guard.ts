// A shared store (Redis) as the gateway sees it failing: a failed call is a 503 STORE_UNAVAILABLE, and what must land
// (settlements, slots given back, the slot a call with no answer may have taken) waits in an outbox, retried in order.
import type { Logger } from 'pino';
import { defineErrors, GatewayError } from '../errors.ts';
import { checkSettleArgs } from './settle-args.ts';
import type { AccountLease, AcquireAccountRequest, AcquireAccountResult, Admission, AdmitRequest, AdmitResult, KeyLimits, LeaseEnding, Store, UsageRecord } from './types.ts';
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

/** The calls that must land, kept while the store does not answer and retried in order with a growing delay. */
class Outbox {
  readonly #log: Logger;
  readonly #limit: number;
  readonly #calls: Pending[] = [];
  settlements = 0;
  /** False from a failed call until one succeeds. */
  up = true;
  #timer: NodeJS.Timeout | undefined;
  #delay = FIRST_RETRY_MS;
  #flushing: Promise<boolean> | undefined;
  #loggedAt = -Infinity;

  constructor(log: Logger, limit: number) {
    this.#log = log;
    this.#limit = limit;
  }

  get empty(): boolean { return this.#calls.length === 0; }

  report(err: unknown, what: string): void {
    this.up = false;
    const now = Date.now();
    if (now - this.#loggedAt < LOG_EVERY_MS) return;
    this.#loggedAt = now;
    this.#log.error({ err: redisError(err), pending_settlements: this.settlements, pending_calls: this.#calls.length }, `store unavailable (${what}): answering 503 STORE_UNAVAILABLE, holding settlements and released slots`);
  }

  /** Any call that succeeds says the store is back: held calls go at once rather than at the next retry. */
  answered(): void {
    this.up = true;
    if (this.#calls.length && this.#timer && !this.#flushing) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#delay = 0;
      this.#schedule();
    }
  }

  /** Keeps a call behind those held already (a key's calls keep their order); past the limit the oldest is dropped. */
  hold(p: Pending): void {
    if (this.#calls.length >= this.#limit) {
      const lost = this.#calls.shift()!;
      if (lost.settlement) this.settlements--;
      this.#log.error({ req_id: lost.reqId, key_id: lost.keyId }, `store outbox full: the oldest held ${lost.settlement ? 'settlement' : 'slot release'} is dropped`);
    }
    this.#calls.push(p);
    if (p.settlement) this.settlements++;
    this.#schedule();
  }

  /** Tries the held calls in order; true when none is left. */
  async #flush(): Promise<boolean> {
    const calls = this.#calls;
    while (calls.length) {
      const batch = calls.slice(0, 100);
      const results = await Promise.allSettled(batch.map((p) => p.run()));
      // Up to the first failure they are done; any after it are tried again (a repeat is recognised, never counted).
      const failed = results.findIndex((r) => r.status === 'rejected');
      for (const p of calls.splice(0, failed === -1 ? batch.length : failed)) if (p.settlement) this.settlements--;
      if (failed !== -1) { this.report((results[failed] as PromiseRejectedResult).reason, 'retry'); return false; }
    }
    return true;
  }

  #schedule(): void {
    if (this.#timer || this.#flushing) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushing = this.#flush().finally(() => { this.#flushing = undefined; });
      this.#flushing.then((done) => {
        if (done) {
          this.up = true;
          this.#log.info('store reachable again: every held settlement recorded');
          this.#delay = FIRST_RETRY_MS;
        } else {
          this.#delay = Math.min(MAX_RETRY_MS, Math.max(FIRST_RETRY_MS, this.#delay * 2));
          this.#schedule();
        }
      }, () => {});
    }, this.#delay).unref();
  }

  /** At shutdown what is held gets CLOSE_FLUSH_MS to land; what is left is logged as lost. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#calls.length) return;
    await this.#flushing;
    const done = await Promise.race([this.#flush(), new Promise<false>((r) => setTimeout(r, CLOSE_FLUSH_MS, false).unref())]);
    if (!done && this.#calls.length) {
      this.#log.error({ lost: this.#calls.length, req_ids: this.#calls.slice(0, 20).map((p) => p.reqId) }, 'store still unreachable at shutdown: held settlements and slot releases are lost');
    }
  }
}

/** The store with failures turned into 503s, and settlements and released slots kept until they land. */
export function guardStore(inner: Store, log: Logger, limit = OUTBOX_LIMIT): Store {
  const guard = new Guard(inner, new Outbox(log, limit));
  const own = new Map<PropertyKey, unknown>(GUARDED.map((name) => [name, (guard[name] as () => unknown).bind(guard)]));
  return new Proxy(inner, {
    get(target, name) {
      const known = own.get(name);
      if (known) return known;
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      const onError = guard.fail(String(name));
      const fn = (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        return result instanceof Promise ? result.then(guard.answered, onError) : result;
      };
      own.set(name, fn);
      return fn;
    },
  });
}

/**
 * What the guard answers itself: the calls whose failure is more than a 503 (those that take or give back a slot, and the
 * settlement), the outbox's state, and close.
 */
class Guard {
  readonly #inner: Store;
  readonly #outbox: Outbox;

  constructor(inner: Store, outbox: Outbox) {
    this.#inner = inner;
    this.#outbox = outbox;
  }

  /** A failed call's error for the caller: its own argument errors as they are, the store's a 503. */
  fail(name: string): (err: unknown) => never {
    return (err) => {
      // A refusal of the call's own arguments (a RangeError: an unknown time zone, a malformed conversation) is the caller's.
      if (err instanceof GatewayError || err instanceof RangeError) throw err;
      this.#outbox.report(err, name);
      throw storeUnavailable();
    };
  }

  readonly answered = <T>(value: T): T => {
    this.#outbox.answered();
    return value;
  };

  /** A slot given back must land: when the store cannot take it now, it is held and retried. */
  async #giveBack(run: () => Promise<unknown>, reqId: string, what: string): Promise<void> {
    if (this.#outbox.empty) {
      try {
        await run();
        return;
      } catch (err) {
        this.#outbox.report(err, what);
      }
    }
    this.#outbox.hold({ run, settlement: false, reqId });
  }

  release(admission: Admission): Promise<void> {
    return this.#giveBack(() => this.#inner.release(admission), admission.requestId, 'release');
  }

  releaseAccount(lease: AccountLease, ending?: LeaseEnding): Promise<void> {
    return this.#giveBack(() => this.#inner.releaseAccount(lease, ending), lease.requestId, 'releaseAccount');
  }

  // Calls that take a slot: when the answer never comes, whatever slot the call may still take is given back.

  async admit(req: AdmitRequest): Promise<AdmitResult> {
    try {
      return this.answered(await this.#inner.admit(req));
    } catch (err) {
      void this.release(admissionFor(req));
      return this.fail('admit')(err);
    }
  }

  async acquireAccount(req: AcquireAccountRequest): Promise<AcquireAccountResult> {
    try {
      return this.answered(await this.#inner.acquireAccount(req));
    } catch (err) {
      for (const c of req.candidates) void this.releaseAccount({ group: req.group, account: c.id, requestId: req.requestId });
      return this.fail('acquireAccount')(err);
    }
  }

  async settle(record: UsageRecord, admission: Admission | undefined, limits: KeyLimits): Promise<{ recorded: boolean; held?: boolean }> {
    checkSettleArgs(record, admission); // a malformed record is an error now, not a held one that blocks the rest
    // Behind held ones, so a key's settlements land in the order they were made.
    if (this.#outbox.empty) {
      try {
        return await this.#inner.settle(record, admission, limits);
      } catch (err) {
        this.#outbox.report(err, 'settle');
      }
    }
    this.#outbox.hold({ run: () => this.#inner.settle(record, admission, limits), settlement: true, reqId: record.request_id, keyId: record.key_id });
    return { recorded: false, held: true };
  }

  async close(): Promise<void> { await this.#outbox.close(); await this.#inner.close(); }

  pendingSettlements(): number { return this.#outbox.settlements; }
  available(): boolean { return this.#outbox.up; }
}

/** The Store methods the guard answers itself. */
const GUARDED = ['release', 'releaseAccount', 'admit', 'acquireAccount', 'settle', 'close', 'pendingSettlements', 'available'] as const satisfies readonly (keyof Store & keyof Guard)[];
