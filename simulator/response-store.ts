// Stored Responses API objects, visible only to the credential that created them, as the real service scopes ids to an account.

/** Enough for long test runs and demos; the oldest are forgotten first so memory stays bounded. */
export const DEFAULT_MAX_STORED_RESPONSES = 10_000;

export interface StoredResponse {
  /** The response object exactly as GET /v1/responses/{id} returns it. */
  body: Record<string, unknown> & { id: string };
  /** Input tokens a request chained onto this response inherits (its input plus its output). */
  contextTokens: number;
}

export class ResponseStore {
  // One map keyed by credential and id: Map keeps insertion order, so the first key is the oldest.
  readonly #entries = new Map<string, StoredResponse>();
  readonly #max: number;

  constructor(max = DEFAULT_MAX_STORED_RESPONSES) {
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  put(credential: string, stored: StoredResponse): void {
    if (this.#max <= 0) return;
    this.#entries.set(keyOf(credential, stored.body.id), stored);
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get(credential: string, id: string): StoredResponse | undefined {
    return this.#entries.get(keyOf(credential, id));
  }
}

function keyOf(credential: string, id: string): string {
  // JSON quoting keeps every credential/id pair distinct, whatever characters either holds.
  return JSON.stringify([credential, id]);
}
