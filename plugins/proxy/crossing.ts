// How a request crosses to the upstream and its answer back: natively (the client's own bytes, relayed as they come) or
// translated (plugins/proxy/translate/). The pool and the exchange work the same way with either.
import type { IncomingHttpHeaders } from 'node:http';
import type { AccountConfig, Ctx, Env, FormatAdapter } from '../../core/types.ts';
import type { Opening } from './attempt.ts';
import { relay } from './relay.ts';
import { bodyForAccount, type Body, type HeaderAllowList, upstreamBody, upstreamHeaders, upstreamPath } from './upstream-request.ts';
import type { UpstreamResponse } from './upstream-response.ts';
import type { DrainBounds } from './usage-drain.ts';

/** What goes to one account: the upstream path (and query) as its format names it, the headers (no credential yet), the body. */
export interface Outbound { path: string; headers: IncomingHttpHeaders; body: Body }

export interface Crossing {
  /** The format the upstream speaks (its scanner reads the stream's opening frames). */
  readonly upstreamFormat: FormatAdapter;
  /** Whether answers create upstream state pinned to their account (stored responses). */
  readonly pins: boolean;
  /** The request for one account (ctx.account and ctx.upstreamModel are that account's). */
  outbound(account: AccountConfig): Promise<Outbound>;
  /**
   * Relays one upstream answer to the client, going on from a held stream's `opening`; resolves when the client response
   * ended or the client left (and a stream read on for its usage within `drain` ended).
   */
  relay(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, drain?: DrainBounds, opening?: Opening): Promise<void>;
  /** Answers the request without any upstream (a count the upstream cannot make, a kept answer), when set. */
  readonly local?: () => Promise<void>;
}

/** The client's own format upstream: its bytes (re-serialised only when a stage or the account's model changed them). */
export class NativeCrossing implements Crossing {
  readonly upstreamFormat: FormatAdapter;
  readonly pins: boolean;
  readonly #ctx: Ctx;
  readonly #env: Env;
  readonly #base: Body;
  readonly #baseModel: string | undefined;
  readonly #given: IncomingHttpHeaders;
  readonly #allowed: (name: string) => boolean;
  readonly #usage: boolean;

  private constructor(ctx: Ctx, env: Env, base: Body, allowed: (name: string) => boolean, usage: boolean) {
    this.#ctx = ctx;
    this.#env = env;
    this.#base = base;
    this.#baseModel = ctx.upstreamModel;
    this.#given = ctx.req.headers;
    this.#allowed = allowed;
    this.#usage = usage;
    this.upstreamFormat = ctx.format;
    this.pins = ctx.format.pins !== undefined;
  }

  static async open(ctx: Ctx, env: Env, headers: HeaderAllowList, usage: boolean): Promise<NativeCrossing> {
    return new NativeCrossing(ctx, env, await upstreamBody(ctx), headers.for(ctx.format, ctx.platform!), usage);
  }

  async outbound(account: AccountConfig): Promise<Outbound> {
    const ctx = this.#ctx;
    const body = await bodyForAccount(ctx, this.#base, this.#baseModel, ctx.upstreamModel);
    return { path: upstreamPath(ctx), body, headers: upstreamHeaders(this.#given, body, this.#allowed) };
  }

  relay(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, drain?: DrainBounds, opening?: Opening): Promise<void> {
    return relay(ctx, upstream, keepaliveMs, this.#usage, drain, opening);
  }
}
