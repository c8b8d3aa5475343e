// A translated crossing: the client's request decoded once by its format's codec into the canonical model, encoded for each
// account by the upstream format's codec, and the answer translated back (relay.ts). docs/translation.md has the rules.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { CanonRequest, Codec, CodecContext } from '../../../core/canonical.ts';
import type { AccountConfig, Ctx, Env, FormatAdapter } from '../../../core/types.ts';
import type { Crossing, Outbound } from '../crossing.ts';
import { type HeaderAllowList, upstreamHeaders } from '../upstream-request.ts';
import { estimateInputTokens } from './estimate.ts';
import { relayTranslated, type Codecs } from './relay.ts';

export class TranslatedCrossing implements Crossing {
  readonly upstreamFormat: FormatAdapter;
  readonly pins = false;
  readonly local?: () => void;
  readonly #ctx: Ctx;
  readonly #env: Env;
  readonly #codecs: Codecs;
  readonly #given: IncomingHttpHeaders;
  readonly #allowed: (name: string) => boolean;

  private constructor(ctx: Ctx, env: Env, codecs: Codecs, allowed: (name: string) => boolean) {
    this.#ctx = ctx;
    this.#env = env;
    this.#codecs = codecs;
    this.#given = ctx.req.headers;
    this.#allowed = allowed;
    this.upstreamFormat = ctx.upstreamFormat!;
    // No counter upstream: the gateway estimates, and says so in the answer.
    if (codecs.cctx.request.operation === 'count_tokens' && !codecs.upstream.countsTokens) this.local = () => this.#estimate();
  }

  /** Decodes the client's request (a request the upstream cannot honour is refused here, in the client's format). */
  static async open(ctx: Ctx, env: Env, headers: HeaderAllowList): Promise<TranslatedCrossing> {
    const client: Codec = ctx.format.codec!;
    const upstream: Codec = ctx.upstreamFormat!.codec!;
    const operation = ctx.format.operation!(ctx.route.path)!;
    const request: CanonRequest = client.decodeRequest(await ctx.json(), operation,
      { model: ctx.upstreamModel ?? ctx.model ?? '', path: ctx.path, query: ctx.search });
    request.stream = operation === 'generate' && ctx.stream;
    const cctx: CodecContext = { request, clientModel: ctx.model ?? request.model, defaults: { maxOutputTokens: ctx.group!.default_max_tokens } };
    return new TranslatedCrossing(ctx, env, { client, upstream, cctx }, headers.translated(ctx.platform!));
  }

  async outbound(account: AccountConfig): Promise<Outbound> {
    const ctx = this.#ctx;
    const { upstream, cctx } = this.#codecs;
    const request = { ...cctx.request, model: ctx.upstreamModel ?? cctx.request.model };
    const encoded = upstream.encodeRequest(request, { ...cctx, request });
    const body = { bytes: Buffer.from(JSON.stringify(encoded.body)), json: true };
    const auth = this.#env.upstreamAuth[ctx.platform?.auth ?? this.upstreamFormat.upstreamAuth];
    const headers = upstreamHeaders(this.#given, auth, account, body, this.#allowed);
    Object.assign(headers, encoded.headers);
    return { path: encoded.path, headers, body };
  }

  relay(ctx: Ctx, upstream: IncomingMessage, keepaliveMs: number): Promise<void> {
    return relayTranslated(ctx, upstream, keepaliveMs, this.#codecs);
  }

  #estimate(): void {
    const { client, cctx } = this.#codecs;
    const text = JSON.stringify(client.encodeCount({ inputTokens: estimateInputTokens(cctx.request), estimated: true }, cctx));
    const ctx = this.#ctx;
    ctx.outcome = 'completed';
    ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-request-id': ctx.id }).end(text);
  }
}
