// Conversations the gateway keeps for clients (Store.putConversation): opaque JSON text per (key id, answer id),
// expiring on the real clock, bounded in count (the oldest kept goes first) and in size per value.
/** Ids a client may name: what the gateway mints (resp_<hex>) and nothing that could shape a store key oddly. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Largest conversation kept (a long agent session with its tool output); a larger one is refused, not truncated. */
export const CONVERSATION_MAX_BYTES = 16 * 1024 * 1024;
/** Conversations one process's memory keeps at most. */
export const CONVERSATIONS_KEPT = 10_000;

export interface KeptConversation { value: string; expires: number }

const SEP = '\u0000';

/** Refuses what no store may keep: an id outside CONVERSATION_ID, a value over CONVERSATION_MAX_BYTES. */
export function checkConversation(responseId: string, value: string): void {
  if (!CONVERSATION_ID.test(responseId)) throw new RangeError('conversation id must match [A-Za-z0-9_-]{1,128}');
  if (Buffer.byteLength(value) > CONVERSATION_MAX_BYTES) throw new RangeError(`conversation larger than ${CONVERSATION_MAX_BYTES} bytes`);
}

export class ConversationBook {
  readonly #kept = new Map<string, KeptConversation>();
  readonly #max: number;
  constructor(max = CONVERSATIONS_KEPT) { this.#max = max; }

  put(keyId: string, responseId: string, value: string, ttlMs: number): void {
    checkConversation(responseId, value);
    const k = keyId + SEP + responseId;
    this.#kept.delete(k);
    this.#kept.set(k, { value, expires: Date.now() + ttlMs });
    for (const oldest of this.#kept.keys()) {
      if (this.#kept.size <= this.#max) break;
      this.#kept.delete(oldest);
    }
  }

  get(keyId: string, responseId: string): string | undefined {
    if (!CONVERSATION_ID.test(responseId)) return undefined;
    const k = keyId + SEP + responseId;
    const kept = this.#kept.get(k);
    if (kept && kept.expires <= Date.now()) {
      this.#kept.delete(k);
      return undefined;
    }
    return kept?.value;
  }

  /** As kept, expired or not (the file store writes what it finds). */
  kept(keyId: string, responseId: string): KeptConversation | undefined {
    return this.#kept.get(keyId + SEP + responseId);
  }

  restore(keyId: string, responseId: string, kept: KeptConversation): void {
    if (kept.expires > Date.now()) this.#kept.set(keyId + SEP + responseId, kept);
  }
}
