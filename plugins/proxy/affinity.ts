// Affinity: where a request should go first (the account a stored conversation it continues is pinned to, else its
// session's account), and what the store learns as the slot goes back (the session bound, the ids the answer created
// pinned). Sticky sessions and response pins, in one place. A pin is the key's own: a stored object another key names
// is not found, and the request is refused before anything goes upstream.
import type { GatewayError } from '../../core/errors.ts';
import type { AccountConfig, Ctx, GroupConfig, ResponsePins } from '../../core/types.ts';
import type { AcquireAccountRequest, AcquireAccountResult, FoundBinding, LeaseEnding, Store } from '../../core/store/types.ts';
import { conversationUnavailable, noCandidates, proxyErrors } from './pool-errors.ts';
import type { PoolMetrics } from './pool-metrics.ts';
import { sessionKey, type SessionOptions } from './session.ts';
import { dig } from '../dotted.ts';

export interface AffinityOptions extends SessionOptions { sticky_ttl_ms: number; pin_ttl_ms: number }

/**
 * The first choice, looked up by the store within the first account decision: the account a stored object this request
 * continues is pinned to (that account only), else the session's account.
 */
export interface Preference { bound: NonNullable<AcquireAccountRequest['bound']>; session?: string; named?: Named }

/** A stored object the request names: its id, and the body field naming it (none: the path does). */
interface Named { id: string; field?: string }

/** Ids of stored objects as upstreams mint them (resp_<hex>): nothing else is pinned or looked up. */
const STORED_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A pin's name: the id, then the key that created it (after a ':', which no id holds). */
const pinName = (ctx: Ctx, id: string): string => `${id}:${ctx.key?.id ?? ''}`;
const idOf = (name: string): string => name.slice(0, name.indexOf(':'));

/** A stored object this key did not create (or whose pin expired): the upstream's own 404, in the client's format. */
const notFound = (n: Named): GatewayError =>
  (n.field === undefined ? proxyErrors.response_not_found(n.id) : proxyErrors.previous_response_not_found(n.id, { param: n.field }));

export class Affinity {
  readonly #store: Pick<Store, 'bound' | 'bind'>;
  readonly #o: AffinityOptions;
  readonly #sticky: PoolMetrics['sticky'];

  constructor(store: Pick<Store, 'bound' | 'bind'>, o: AffinityOptions, sticky: PoolMetrics['sticky']) {
    this.#store = store;
    this.#o = o;
    this.#sticky = sticky;
  }

  /**
   * The bindings to look up in the first account decision; refuses when no account can serve the request at all, or
   * (`pins`: the crossing keeps stored objects on accounts) when it names objects of which one is not this key's.
   */
  async preference(ctx: Ctx, group: GroupConfig, candidates: readonly AccountConfig[], pins: boolean): Promise<Preference> {
    const bound: Preference['bound'] = [];
    // A format that pins no ids (chat completions, Messages) has none to look for.
    const named = pins && ctx.format.pins ? await this.#named(ctx, ctx.format.pins) : [];
    for (const n of named) if (!STORED_ID.test(n.id)) throw notFound(n);
    // Beyond the first (which the decision looks up), each is looked up on its own: rare (a path id and a body's).
    for (const n of named.slice(1)) if (await this.#store.bound(group.name, 'pin', pinName(ctx, n.id)) === undefined) throw notFound(n);
    for (const n of named) bound.push({ kind: 'pin', name: pinName(ctx, n.id) });
    if (!candidates.length) {
      // Nothing can serve it; a conversation pinned to an account that is gone says so (rare: a lookup of its own).
      if (named.length && await this.#store.bound(group.name, 'pin', bound[0].name) !== undefined) throw conversationUnavailable(named[0].id, 'gone', Date.now());
      throw named.length ? notFound(named[0]) : noCandidates(group, ctx.upstreamModel);
    }
    const session = candidates.length < 2 ? undefined : await sessionKey(ctx, this.#o);
    if (session !== undefined) bound.push({ kind: 'sticky', name: session });
    return { bound, session, ...(named.length ? { named: named[0] } : {}) };
  }

  /**
   * The pin the first decision found (the conversation lives on that account only), counting how sessions fared; the
   * 404 when the request names a stored object and no pin of this key's was found.
   */
  decided(p: Preference, acquired: AcquireAccountResult): FoundBinding | GatewayError | undefined {
    const pin = acquired.bound?.kind === 'pin' ? { ...acquired.bound, name: idOf(acquired.bound.name) } : undefined;
    if (p.named && !pin) return notFound(p.named);
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
    if (created !== undefined && STORED_ID.test(created)) bind.push({ kind: 'pin', name: pinName(ctx, created), ttlMs: this.#o.pin_ttl_ms });
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

  /** Pin an id to the account (and the key) now: a held stream flows on only once its id is pinned, so the client can never continue it first. */
  async pinNow(ctx: Ctx, group: GroupConfig, id: string, account: AccountConfig): Promise<void> {
    if (STORED_ID.test(id)) await this.#store.bind(group.name, 'pin', pinName(ctx, id), account.id, this.#o.pin_ttl_ms);
  }

  /** The stored objects this request continues or reads, where its format (`pins`) names them. */
  async #named(ctx: Ctx, pins: ResponsePins): Promise<Named[]> {
    const named: Named[] = [];
    for (const p of pins.pathParams) {
      const first = ctx.params[p]?.split('/')[0];
      if (first && !pins.operations.includes(first)) named.push({ id: first });
    }
    if (ctx.req.method !== 'GET' && (await ctx.body()).length > 0) {
      try {
        const id = dig(await ctx.json(), pins.requestField);
        if (typeof id === 'string' && id !== '' && id !== named[0]?.id) named.push({ id, field: pins.requestField });
      } catch { /* not JSON: nothing names a stored object */ }
    }
    return named;
  }
}
