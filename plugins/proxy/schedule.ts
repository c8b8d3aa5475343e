// Account choice for one attempt: the candidates serving the model, a store lease (heartbeat, release), and the bounded wait when all are busy.
import { setTimeout as sleep } from 'node:timers/promises';
import { defineErrors } from '../../core/errors.ts';
import type { AccountConfig, Ctx, GroupConfig } from '../../core/types.ts';
import type { AccountCandidate, AccountLease, AcquireAccountRequest, AcquireAccountResult, LeaseEnding, Store } from '../../core/store/types.ts';
import { mapModel, matchesAny } from '../globs.ts';
import { Heartbeats } from '../heartbeats.ts';
import type { PoolMetrics } from './pool-metrics.ts';

export interface ScheduleOptions { lease_ms: number; heartbeat_ms: number; queue_timeout_ms: number; queue_size: number }

/** Polling while every account is busy: the first retry soon, then slower (a local release wakes a waiter at once). */
const FIRST_POLL_MS = 50;
const POLL_GROWTH = 1.5;
const MAX_POLL_MS = 1000;

/**
 * The candidates found per group and upstream model: a group is its config's own object (a reload makes new ones, and
 * the old ones leave with their entries), so a list is computed once, not per request. The model comes from the
 * client and a glob allow-list admits any number of names, of any length: at most CANDIDATE_MODELS names a group are
 * kept (past that its lists start again), each of at most CACHED_MODEL_CHARS (a longer one is looked up every time).
 */
const candidateLists = new WeakMap<GroupConfig, Map<string | undefined, readonly AccountConfig[]>>();
const CANDIDATE_MODELS = 256;
const CACHED_MODEL_CHARS = 256;

const serving = (group: GroupConfig, model: string | undefined): readonly AccountConfig[] =>
  group.accounts.filter((a) => a.enabled && (model === undefined || !a.models || matchesAny(a.models, model)
    || mapModel(a.model_map, model) !== undefined));

/**
 * Enabled accounts of the group that serve this upstream model (their `models` globs, or their own model_map). The
 * list is shared by the group's requests for that model: read it, never change it.
 */
export function candidatesFor(group: GroupConfig, model: string | undefined): readonly AccountConfig[] {
  if (model !== undefined && model.length > CACHED_MODEL_CHARS) return serving(group, model);
  let lists = candidateLists.get(group);
  if (!lists) candidateLists.set(group, lists = new Map());
  let list = lists.get(model);
  if (!list) {
    if (lists.size >= CANDIDATE_MODELS) lists.clear();
    list = serving(group, model);
    lists.set(model, list);
  }
  return list;
}

/** What the store is told of each candidate (its scheduling numbers, never its credential), once per candidate list. */
const storeCandidates = new WeakMap<readonly AccountConfig[], AccountCandidate[]>();
function forStore(candidates: readonly AccountConfig[]): AccountCandidate[] {
  let out = storeCandidates.get(candidates);
  if (!out) {
    out = candidates.map((a) => ({ id: a.id, priority: a.priority, weight: a.weight, concurrency: a.concurrency }));
    storeCandidates.set(candidates, out);
  }
  return out;
}

/** The model this account is sent: its own model_map applied to the group's upstream model. */
export const accountModel = (account: AccountConfig, model: string | undefined): string | undefined =>
  model === undefined ? model : mapModel(account.model_map, model) ?? model;

const BUSY = { 'x-gateway-limit': 'accounts_busy', 'retry-after': '1' };
const errors = defineErrors('proxy: scheduling', {
  accounts_busy_queue_full: {
    wire: 'ACCOUNTS_BUSY_QUEUE_FULL', status: 429, doc: 'Every account of the group is at its concurrency and `queue_size` requests already wait.', headers: BUSY,
    message: (p: { group: string; waiting: number }) => `Every upstream account of group "${p.group}" is busy and ${p.waiting} requests are already waiting; retry shortly`,
  },
  accounts_busy_timeout: {
    wire: 'ACCOUNTS_BUSY_TIMEOUT', status: 429, doc: 'Every account of the group stayed busy for `queue_timeout_ms`.', headers: BUSY,
    message: (p: { group: string; seconds: number }) => `Every upstream account of group "${p.group}" stayed busy for ${p.seconds} s; retry shortly`,
  },
});

interface Waiter { accounts: Set<string>; wake: () => void }

/** Waiting requests per group, shared by every proxy stage of the process that uses this store (the queue bound is per group). */
const queues = new WeakMap<Store, Map<string, Waiter[]>>();

export interface AcquireRequest {
  group: GroupConfig;
  candidates: readonly AccountConfig[];
  prefer?: string;
  only?: boolean;
  /** Bindings for the store to look the preference up in, within the same decision. */
  bound?: AcquireAccountRequest['bound'];
  /** Called while waiting in the queue, with the ms waited so far (streams use it for keepalives). */
  waiting?: (waitedMs: number) => void;
}

/** A lease or the store's refusal other than busy (busy waits); undefined when the client left while waiting. */
export type Acquired = Exclude<AcquireAccountResult, { ok: false; reason: 'busy' }> | undefined;

export class Scheduler {
  readonly #store: Store;
  readonly #o: ScheduleOptions;
  readonly #metrics: PoolMetrics;
  readonly #waiting: Map<string, Waiter[]>;
  readonly #leases: Heartbeats<AccountLease>;

  constructor(store: Store, options: ScheduleOptions, metrics: PoolMetrics) {
    this.#store = store;
    this.#o = options;
    this.#metrics = metrics;
    this.#leases = new Heartbeats(options.heartbeat_ms, (lease, now) => store.heartbeatAccount(lease, options.lease_ms, now));
    let waiting = queues.get(store);
    if (!waiting) queues.set(store, waiting = new Map());
    this.#waiting = waiting;
  }

  /**
   * Take a slot on one of the candidates, waiting (bounded) while all are busy. `gate` is store work sent just before,
   * so that it shares the first try's round trip (the request's admission): when it fails, the slot the first try took
   * is given back and the gate's error thrown.
   */
  async acquire(ctx: Ctx, req: AcquireRequest, attempt: number, gate?: Promise<void>): Promise<Acquired> {
    const group = req.group.name;
    const requestId = `${ctx.id}#${attempt}`;
    const candidates = forStore(req.candidates);
    const ask = () => {
      const asked: AcquireAccountRequest = { group, requestId, now: Date.now(), leaseMs: this.#o.lease_ms, candidates };
      if (req.prefer !== undefined) { asked.prefer = req.prefer; asked.only = req.only === true; }
      if (req.bound?.length) asked.bound = req.bound;
      return this.#store.acquireAccount(asked);
    };
    const first = ask();
    if (gate) {
      first.catch(() => {}); // awaited below; until then a failure must not count as unhandled
      try {
        await gate;
      } catch (err) {
        first.then((r) => (r.ok ? this.#store.releaseAccount(r.lease) : undefined)).catch(() => {});
        throw err;
      }
    }
    let result = await first;
    if (result.ok || result.reason !== 'busy') return this.#took(result);
    const queue = this.#waiting.get(group) ?? [];
    if (queue.length >= this.#o.queue_size) {
      throw errors.accounts_busy_queue_full({ group, waiting: queue.length });
    }
    const start = performance.now();
    const abort = new AbortController();
    const onClose = () => abort.abort();
    ctx.res.once('close', onClose);
    let wake: AbortController | undefined;
    const waiter: Waiter = { accounts: new Set(req.candidates.map((a) => a.id)), wake: () => wake?.abort() };
    queue.push(waiter);
    this.#waiting.set(group, queue);
    try {
      for (let pause = FIRST_POLL_MS; ; pause = Math.min(MAX_POLL_MS, pause * POLL_GROWTH)) {
        const waited = performance.now() - start;
        const left = this.#o.queue_timeout_ms - waited;
        if (left <= 0) {
          const s = this.#o.queue_timeout_ms >= 10_000 ? Math.round(this.#o.queue_timeout_ms / 1000) : Math.round(this.#o.queue_timeout_ms / 100) / 10;
          throw errors.accounts_busy_timeout({ group, seconds: s });
        }
        req.waiting?.(waited);
        wake = new AbortController();
        try { await sleep(Math.min(pause, left), undefined, { signal: AbortSignal.any([abort.signal, wake.signal]) }); } catch { /* woken or the client left */ }
        if (abort.signal.aborted) return undefined;
        result = await ask();
        if (result.ok || result.reason !== 'busy') return this.#took(result);
      }
    } finally {
      ctx.res.off('close', onClose);
      queue.splice(queue.indexOf(waiter), 1);
      if (!queue.length) this.#waiting.delete(group);
      this.#metrics.queueWait.observe({ group }, (performance.now() - start) / 1000);
    }
  }

  #took(result: AcquireAccountResult): Acquired {
    if (!result.ok) return result as Acquired;
    this.#leases.add(result.lease);
    this.#metrics.selections.inc({ group: result.lease.group, account: result.lease.account });
    return result;
  }

  /** Give the slot back (every ending, with what it tells), and hand it at once to the oldest local waiter that could use it. */
  async release(lease: AccountLease, ending?: LeaseEnding): Promise<void> {
    if (!this.#leases.delete(lease)) return;
    try {
      await this.#store.releaseAccount(lease, ending);
    } finally {
      this.#waiting.get(lease.group)?.find((w) => w.accounts.has(lease.account))?.wake();
    }
  }
}
