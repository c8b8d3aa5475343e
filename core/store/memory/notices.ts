// What the embedded store keeps for the notifier (core/notify): claims that make an event go out once (here: once per
// process, the only one), and the latest deliveries as opaque JSON texts. Both bounded; neither is written to the file.

/** Claims held at most; past it the oldest goes (expired ones first, as they are found). */
export const CLAIMS_KEPT = 10_000;

export class NoticeBook {
  readonly #claims = new Map<string, number>();
  #deliveries: string[] = [];
  readonly #max: number;
  constructor(max = CLAIMS_KEPT) { this.#max = max; }

  claim(name: string, ttlMs: number, now = Date.now()): boolean {
    const until = this.#claims.get(name);
    if (until !== undefined && until > now) return false;
    this.#claims.delete(name);
    this.#claims.set(name, now + Math.max(1, ttlMs));
    for (const [oldest, expires] of this.#claims) {
      if (this.#claims.size <= this.#max && expires > now) break;
      this.#claims.delete(oldest);
    }
    return true;
  }

  note(text: string, keep: number): void {
    const at = this.#deliveries.indexOf(text);
    if (at !== -1) this.#deliveries.splice(at, 1);
    this.#deliveries.unshift(text);
    if (this.#deliveries.length > keep) this.#deliveries.length = Math.max(1, keep);
  }

  recent(limit: number): string[] {
    return this.#deliveries.slice(0, Math.max(0, limit));
  }
}
