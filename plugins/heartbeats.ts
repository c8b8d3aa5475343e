// Leases renewed while they are held: one timer for all of a stage's leases (running while any is held), so a request
// costs no timer of its own. A lease is renewed at most `everyMs` after it was added and every `everyMs` after that.

export class Heartbeats<L> {
  readonly #held = new Set<L>();
  readonly #everyMs: number;
  readonly #renew: (lease: L, now: number) => Promise<unknown>;
  #timer: NodeJS.Timeout | undefined;

  /** `renew` failures are left to the lease's expiry: a renewal that did not land is tried again at the next beat. */
  constructor(everyMs: number, renew: (lease: L, now: number) => Promise<unknown>) {
    this.#everyMs = everyMs;
    this.#renew = renew;
  }

  add(lease: L): void {
    this.#held.add(lease);
    this.#timer ??= setInterval(() => this.#beat(), this.#everyMs).unref();
  }

  /** False when the lease was not held (released already). */
  delete(lease: L): boolean {
    if (!this.#held.delete(lease)) return false;
    if (!this.#held.size) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    return true;
  }

  #beat(): void {
    const now = Date.now();
    for (const lease of this.#held) this.#renew(lease, now).catch(() => {});
  }
}
