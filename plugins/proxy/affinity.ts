// Affinity: where a request should go first (the account a stored conversation it continues is pinned to, else its
// session's account), and what the store learns as the slot goes back (the session bound, the ids the answer created
// pinned). Sticky sessions and response pins, in one place.
import type { AccountConfig, Ctx, GroupConfig, ResponsePins } from '../../core/types.ts';
import type { AcquireAccountRequest, AcquireAccountResult, FoundBinding, LeaseEnding, Store } from '../../core/store/types.ts';
import { conversationUnavailable, noCandidates } from './pool-errors.ts';
import type { PoolMetrics } from './pool-metrics.ts';
import { sessionKey, type SessionOptions } from './session.ts';
import { dig } from '../dotted.ts';

export interface AffinityOptions extends SessionOptions { sticky_ttl_ms: number; pin_ttl_ms: number }

/**
 * The first choice, looked up by the store within the first account decision: the account a stored object this request
 * continues is pinned to (that account only), else the session's account.
 */
export interface Preference { bound: NonNullable<AcquireAccountRequest['bound']>; session?: string }

export class Affinity {
  readonly #store: Pick<Store, 'bound' | 'bind'>;
  readonly #o: AffinityOptions;
  readonly #sticky: PoolMetrics['sticky'];

  constructor(store: Pick<Store, 'bound' | 'bind'>, o: AffinityOptions, sticky: PoolMetrics['sticky']) {
    this.#store = store;
    this.#o = o;
    this.#sticky = sticky;
  }

  /** The bindings to look up in the first account decision; refuses when no account can serve the request at all. */
  async preference(ctx: Ctx, group: GroupConfig, candidates: readonly AccountConfig[]): Promise<Preference> {
    const bound: Preference['bound'] = [];
    // A format that pins no ids (chat completions, Messages) has none to look for.
    const pins = ctx.format.pins;
    if (pins) for (const name of await this.#pinIds(ctx, pins)) bound.push({ kind: 'pin', name });
    if (!candidates.length) {
      // Nothing can serve it; a conversation pinned to an account that is gone says so (rare: a lookup of its own).
      for (const { name } of bound) if (await this.#store.bound(group.name, 'pin', name) !== undefined) throw conversationUnavailable(name, 'gone', Date.now());
      throw noCandidates(group, ctx.upstreamModel);
    }
    const session = candidates.length < 2 ? undefined : await sessionKey(ctx, this.#o);
    if (session !== undefined) bound.push({ kind: 'sticky', name: session });
    return { bound, session };
  }

  /** The pin the first decision found (the conversation lives on that account only), counting how sessions fared. */
  decided(p: Preference, acquired: AcquireAccountResult): FoundBinding | undefined {
    const pin = acquired.bound?.kind === 'pin' ? acquired.bound : undefined;
    if (p.session !== undefined && !pin && acquired.ok) {
      this.#sticky.inc({ result: acquired.bound === undefined ? 'miss' : acquired.preferred ? 'hit' : 'moved' });
    }
    return pin;
  }

  /**
   * What the store learns as the slot goes back: a good exchange ends the account's probing and binds (or moves) the
   * session, restarting its TTL; an id the answer created is pinned to the account.
   */
  ending(ctx: Ctx, p: Preference, pin: FoundBinding | undefined, created: string | undefined): LeaseEnding | undefined {
    const good = ctx.outcome === 'completed' || ctx.outcome === 'incomplete';
    const bind: NonNullable<LeaseEnding['bind']> = [];
    if (created !== undefined) bind.push({ kind: 'pin', name: created, ttlMs: this.#o.pin_ttl_ms });
    if (good && p.session !== undefined && !pin) bind.push({ kind: 'sticky', name: p.session, ttlMs: this.#o.sticky_ttl_ms });
    if (!good && !bind.length) return undefined;
    return { ...(good ? { succeededAt: Date.now() } : {}), ...(bind.length ? { bind } : {}) };
  }

  /** The id of what a stream created, as its scanner saw it (when the format pins such ids). */
  streamedId(ctx: Ctx): string | undefined {
    const pins = ctx.format.pins;
    const id = pins ? (ctx.get(pins.streamVar.variable) as Record<string, unknown> | undefined)?.[pins.streamVar.field] : undefined;
    return typeof id === 'string' ? id : undefined;
  }

  /** The id a whole answer created (when the format pins such ids). */
  bodyId(ctx: Ctx, body: Buffer): string | undefined {
    const field = ctx.format.pins?.bodyField;
    if (field === undefined) return undefined;
    try {
      const id = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[field];
      return typeof id === 'string' ? id : undefined;
    } catch { return undefined; }
  }

  /** Pin an id to the account now: a held stream flows on only once its id is pinned, so the client can never continue it first. */
  pinNow(group: GroupConfig, id: string, account: AccountConfig): Promise<void> {
    return this.#store.bind(group.name, 'pin', id, account.id, this.#o.pin_ttl_ms);
  }

  /** The stored objects this request continues or reads, where its format (`pins`) names them. */
  async #pinIds(ctx: Ctx, pins: ResponsePins): Promise<string[]> {
    const ids: string[] = [];
    for (const p of pins.pathParams) {
      const first = ctx.params[p]?.split('/')[0];
      if (first) ids.push(first);
    }
    if (ctx.req.method !== 'GET' && (await ctx.body()).length > 0) {
      try {
        const id = dig(await ctx.json(), pins.requestField);
        if (typeof id === 'string' && id !== '') ids.push(id);
      } catch { /* not JSON: nothing names a stored object */ }
    }
    return ids;
  }
}
