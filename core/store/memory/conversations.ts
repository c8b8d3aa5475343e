// Conversations the memory store keeps for clients (Store.putConversation): opaque JSON text per (key id, answer id),
// expiring on the real clock, bounded in count (the oldest kept goes first) and in size per value.
import { checkConversation, CONVERSATION_ID } from '../conversations.ts';
/** Conversations one process's memory keeps at most. */
export const CONVERSATIONS_KEPT = 10_000;

export interface KeptConversation { value: string; expires: number }

const SEP = '\u0000';

export class ConversationBook {
  readonly #kept = new Map<string, KeptConversation>();
  readonly #max: number;
  readonly #check: (id: string, value: string) => void;
  /** `check` refuses what may not be kept (the signatures' book has its own bound). */
  constructor(max = CONVERSATIONS_KEPT, check = checkConversation) {
    this.#max = max;
    this.#check = check;
  }

  put(keyId: string, responseId: string, value: string, ttlMs: number): void {
    this.#check(responseId, value);
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
