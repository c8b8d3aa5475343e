// Tool-call signatures the gateway keeps for clients that cannot give them back (chat completions; Responses without
// encrypted_content): an upstream that signs its calls (Codec.signsCalls, Gemini 3) wants each signature back on its
// call. Written when such an answer reaches such a client, read when the client replays the calls of the turn in
// progress; per key, in the store, for the proxy's signature_ttl_ms. A call still unsigned then gets the upstream
// format's placeholder (its encoder), counted here by client format.
import { createHash } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { CanonMessage, CanonRequest, Signed, ToolCallBlock } from '../../../core/canonical.ts';
import { counter, type LabelledCounter } from '../../../core/plugin-metrics.ts';
import type { Store } from '../../../core/store/types.ts';
import type { Ctx } from '../../../core/types.ts';
import type { Codecs } from './frames.ts';

/** The store's name for a call: its id alone repeats across conversations (Gemini's calls get call_1, call_2 …). */
export function callName(call: Pick<ToolCallBlock, 'id' | 'name' | 'arguments'>): string {
  return 'c_' + createHash('sha256').update(`${call.id}\u0000${call.name}\u0000${call.arguments}`).digest('base64url');
}

/** The calls of the turn in progress (after the last user message that is more than tool results) still unsigned. */
function unsignedCalls(messages: CanonMessage[]): ToolCallBlock[] {
  let from = 0;
  messages.forEach((m, i) => {
    if (m.role === 'user' && m.content.some((b) => b.type !== 'tool_result')) from = i + 1;
  });
  return messages.slice(from).flatMap((m) => (m.role === 'assistant'
    ? m.content.filter((b): b is ToolCallBlock => b.type === 'tool_call' && b.signature === undefined)
    : []));
}

function parse(text: string | undefined): Signed | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Signed;
    return typeof value?.format === 'string' && typeof value.value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

export class CallSignatures {
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #standIns: LabelledCounter<'format'>;

  constructor(store: Store, registry: Registry, ttlMs: number) {
    this.#store = store;
    this.#ttlMs = ttlMs;
    this.#standIns = counter(registry, {
      name: 'gateway_thought_signature_standins_total',
      help: 'Tool calls sent to an upstream with its placeholder signature (Gemini\'s skip_thought_signature_validator) because the real one did not come back, by client format.',
      labelNames: ['format'],
    });
  }

  /** Whether this exchange needs the store: an upstream that signs its calls, a client that does not return them. */
  static applies(c: Pick<Codecs, 'client' | 'upstream'>, request: CanonRequest): boolean {
    return c.upstream.signsCalls === true && c.client.returnsCallSignatures?.(request) !== true;
  }

  /** Puts kept signatures back on the calls of the turn in progress. */
  async restore(ctx: Ctx, request: CanonRequest): Promise<void> {
    const calls = unsignedCalls(request.messages);
    const keyId = ctx.key?.id;
    if (calls.length === 0 || keyId === undefined) return;
    const found = await this.#store.getSignatures(keyId, calls.map(callName));
    calls.forEach((call, i) => {
      const signed = parse(found[i]);
      if (signed) call.signature = signed;
    });
  }

  /** Keeps the signatures of an answer's calls before the client can replay them; a failure costs a placeholder later. */
  async keep(ctx: Ctx, calls: ToolCallBlock[]): Promise<void> {
    const keyId = ctx.key?.id;
    if (keyId === undefined) return;
    const signed = calls.filter((c) => c.signature !== undefined);
    await Promise.all(signed.map((call) => this.#store.putSignature(keyId, callName(call), JSON.stringify(call.signature), this.#ttlMs)))
      .catch((err: unknown) => ctx.log.warn({ err, req_id: ctx.id }, 'tool call signature not kept'));
  }

  countStandIns(format: string, n: number): void {
    this.#standIns.inc({ format }, n);
  }
}
