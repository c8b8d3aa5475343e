// A translated crossing: the client's request decoded once by its format's codec into the canonical model, encoded for each
// account by the upstream format's codec, and the answer translated back (relay.ts). docs/translation.md has the rules.
import type { IncomingHttpHeaders } from 'node:http';
import type { CanonRequest, Codec, CodecContext, Operation } from '../../../core/canonical.ts';
import type { AccountConfig, Ctx, Env, FormatAdapter } from '../../../core/types.ts';
import type { Opening } from '../attempt.ts';
import type { Crossing, Outbound } from '../crossing.ts';
import { type HeaderAllowList, upstreamHeaders } from '../upstream-request.ts';
import type { Conversations, Keeping } from './conversations.ts';
import { estimateInputTokens } from '../../../adapters/shared/estimate.ts';
import { inlineMedia, type Inlined, type MediaOptions } from './media.ts';
import type { Codecs } from './frames.ts';
import { relayTranslated } from './relay.ts';
import { CallSignatures } from './signatures.ts';
import { sendJson } from '../../../core/reply.ts';
import { serialize, stringify, turnAfter } from '../../../core/slices.ts';
import type { UpstreamResponse } from '../upstream-response.ts';
import type { DrainBounds } from '../usage-drain.ts';

/** What a translated crossing needs besides the request: the pool's header allow lists, the kept conversations and signatures. */
export interface TranslateParts { env: Env; headers: HeaderAllowList; conversations: Conversations; media: MediaOptions; signatures: CallSignatures }

/** Write a JSON answer the gateway made itself (an estimate, a kept answer). */
function answerLocally(ctx: Ctx, body: unknown): void {
  ctx.end('completed');
  sendJson(ctx.res, 200, body, { 'x-request-id': ctx.id });
}

export class TranslatedCrossing implements Crossing {
  readonly upstreamFormat: FormatAdapter;
  readonly pins = false;
  readonly local?: () => Promise<void>;
  readonly #ctx: Ctx;
  readonly #env: Env;
  readonly #codecs: Codecs;
  readonly #given: IncomingHttpHeaders;
  readonly #allowed: (name: string) => boolean;
  readonly #media: MediaOptions;
  readonly #signatures: CallSignatures;
  /** Placeholders are counted once a request, however many accounts it tries. */
  #counted = false;
  /** URL media fetched inline, once, for an upstream that takes media only inline: after the admission, never before. */
  #inlined: Promise<Inlined | undefined> | undefined;

  private constructor(ctx: Ctx, p: TranslateParts, codecs: Codecs, local?: () => Promise<void>) {
    this.#ctx = ctx;
    this.#env = p.env;
    this.#codecs = codecs;
    this.#given = ctx.req.headers;
    this.#allowed = p.headers.translated(ctx.platform!);
    this.#media = p.media;
    this.#signatures = p.signatures;
    this.upstreamFormat = ctx.upstreamFormat!;
    this.local = local;
  }

  /**
   * Decodes the client's request (one the upstream cannot honour is refused here, in the client's format) and puts the
   * conversation it continues before it.
   */
  static async open(ctx: Ctx, p: TranslateParts): Promise<TranslatedCrossing> {
    const client: Codec = ctx.format.codec!;
    const upstream: Codec = ctx.upstreamFormat!.codec!;
    const operation = ctx.format.operation!(ctx.route.path)!;
    if (operation === 'retrieve') return TranslatedCrossing.#retrieve(ctx, p, client, upstream);
    const request: CanonRequest = client.decodeRequest(await ctx.json(), operation,
      { model: ctx.upstreamModel ?? ctx.model ?? '', path: ctx.path, query: ctx.search });
    // A large body's decoding and its encoding for an account do not follow in one turn of the event loop.
    await turnAfter((await ctx.body()).length);
    request.stream = operation === 'generate' && ctx.stream;
    const keeping: Keeping | undefined = operation === 'generate' ? await p.conversations.resume(ctx, client, request) : undefined;
    const cctx: CodecContext = { request, clientModel: ctx.model ?? request.model, defaults: { maxOutputTokens: ctx.group!.default_max_tokens } };
    const codecs: Codecs = { client, upstream, cctx, keep: keeping?.keep };
    if (operation === 'generate' && CallSignatures.applies(codecs, request)) {
      await p.signatures.restore(ctx, request);
      codecs.signed = (calls) => p.signatures.keep(ctx, calls);
    }
    // No counter upstream: the gateway estimates, and says so.
    const estimate = operation === 'count_tokens' && !upstream.countsTokens
      ? async () => answerLocally(ctx, client.encodeCount({ inputTokens: estimateInputTokens(request), estimated: true }, cctx))
      : undefined;
    return new TranslatedCrossing(ctx, p, codecs, estimate);
  }

  /** Reading a kept answer: served from the store, no upstream involved. */
  static #retrieve(ctx: Ctx, p: TranslateParts, client: Codec, upstream: Codec): TranslatedCrossing {
    const param = ctx.format.pins?.pathParams.find((name) => ctx.params[name] !== undefined);
    const id = param === undefined ? '' : ctx.params[param].split('/')[0];
    const request: CanonRequest = { operation: 'generate' as Operation, model: '', stream: false, system: [], messages: [], tools: [], extras: {} };
    const codecs: Codecs = { client, upstream, cctx: { request, clientModel: '', defaults: { maxOutputTokens: 0 } } };
    return new TranslatedCrossing(ctx, p, codecs, async () => answerLocally(ctx, await p.conversations.answer(ctx, id)));
  }

  async outbound(account: AccountConfig): Promise<Outbound> {
    const ctx = this.#ctx;
    const { upstream, cctx } = this.#codecs;
    const inlined = upstream.inlineMedia ? await (this.#inlined ??= this.#inline()) : undefined;
    const base = inlined?.request ?? cctx.request;
    const request = { ...base, model: ctx.upstreamModel ?? base.model };
    const encoded = upstream.encodeRequest(request, { ...cctx, request });
    if (encoded.standIns && !this.#counted) {
      this.#counted = true;
      this.#signatures.countStandIns(ctx.format.name, encoded.standIns);
    }
    const body = { bytes: inlined ? inlined.body(await stringify(encoded.body)) : await serialize(encoded.body), json: true };
    const headers = upstreamHeaders(this.#given, body, this.#allowed);
    Object.assign(headers, encoded.headers);
    return { path: encoded.path, headers, body };
  }

  /** A refused fetch (an address, a cap) is the client's: nothing went upstream, so nothing is billed. */
  #inline(): Promise<Inlined | undefined> {
    return inlineMedia(this.#codecs.cctx.request, this.#media).catch((err: unknown) => {
      this.#ctx.end('rejected');
      throw err;
    });
  }

  relay(ctx: Ctx, upstream: UpstreamResponse, keepaliveMs: number, drain?: DrainBounds, opening?: Opening): Promise<void> {
    return relayTranslated(ctx, upstream, keepaliveMs, this.#codecs, drain, opening);
  }
}
