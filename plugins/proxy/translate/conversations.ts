// The conversations the gateway keeps for clients whose format stores answers server-side (Responses
// previous_response_id, GET /v1/responses/{id}) when the upstream is another vendor's and cannot: per key, in the
// store, for the group's conversation_ttl_ms. A kept answer holds the whole conversation so far, canonically, and the
// answer as the client saw it.
import type { CanonMessage, CanonRequest, CanonResponse, Codec } from '../../../core/canonical.ts';
import { proxyErrors } from '../pool-errors.ts';
import type { Store } from '../../../core/store/types.ts';
import type { Ctx } from '../../../core/types.ts';
import { stringify } from '../../../core/slices.ts';

interface Kept { messages: CanonMessage[]; answer: unknown }

/** Where one request's answer is to be kept: its id, and how to keep it once the answer is whole. */
export interface Keeping { id: string; keep(res: CanonResponse, answer: unknown): Promise<void> }

export class Conversations {
  readonly #store: Store;
  constructor(store: Store) { this.#store = store; }

  async #read(ctx: Ctx, id: string): Promise<Kept | undefined> {
    const text = await this.#store.getConversation(ctx.key!.id, id);
    return text === undefined ? undefined : (JSON.parse(text) as Kept);
  }

  /**
   * Puts the conversation a request continues before its own messages (refused with a 404 in the client's format when
   * the key has no such answer), and names the answer when the client wants it kept.
   */
  async resume(ctx: Ctx, codec: Codec, request: CanonRequest): Promise<Keeping | undefined> {
    const state = codec.state;
    if (!state) return undefined;
    const previous = state.continues(request);
    if (previous !== undefined) {
      const kept = await this.#read(ctx, previous);
      if (!kept) throw proxyErrors.previous_response_not_found(previous, { param: 'previous_response_id' });
      request.messages = [...kept.messages, ...request.messages];
    }
    if (!state.keeps(request)) return undefined;
    const id = state.name(request);
    const ttl = ctx.group!.conversation_ttl_ms;
    return {
      id,
      keep: async (res, answer) => {
        const kept: Kept = { messages: [...request.messages, { role: 'assistant', content: res.content }], answer };
        return this.#store.putConversation(ctx.key!.id, id, await stringify(kept), ttl);
      },
    };
  }

  /** A kept answer as the client saw it (GET …/{id}), or a 404 in the client's format. */
  async answer(ctx: Ctx, id: string): Promise<unknown> {
    const kept = await this.#read(ctx, id);
    if (!kept) throw proxyErrors.response_not_found(id);
    return kept.answer;
  }
}
