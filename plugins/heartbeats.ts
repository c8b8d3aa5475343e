// Leases renewed while they are held: one timer for all of a stage's leases (running while any is held), so a request
// costs no timer of its own. A lease is renewed at most `everyMs` after it was added and every `everyMs` after that.
//
// The leases held are the first #count slots of an array, a lease leaving by the last one taking its slot: a Set added to
// and deleted from per request kept reallocating its table for the collector to copy (docs/performance.md). Deleting
// looks for the lease from the newest down.

export class Heartbeats<L extends object> {
  #held: (L | undefined)[] = [];
  #count = 0;
  readonly #everyMs: number;
  readonly #renew: (lease: L, now: number) => Promise<unknown>;
  #timer: NodeJS.Timeout | undefined;

  /** `renew` failures are left to the lease's expiry: a renewal that did not land is tried again at the next beat. */
  constructor(everyMs: number, renew: (lease: L, now: number) => Promise<unknown>) {
    this.#everyMs = everyMs;
    this.#renew = renew;
  }

  /** Holds a lease: each is added once (a new acquisition is a new lease object). */
  add(lease: L): void {
    this.#held[this.#count++] = lease;
    this.#timer ??= setInterval(() => this.#beat(), this.#everyMs).unref();
  }

  /** False when the lease was not held (released already). */
  delete(lease: L): boolean {
    const i = this.#at(lease);
    if (i < 0) return false;
    const last = --this.#count;
    this.#held[i] = this.#held[last];
    this.#held[last] = undefined;
    if (last === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      // After a burst, the array goes back to a small one.
      if (this.#held.length > 1024) this.#held = [];
    }
    return true;
  }

  #at(lease: L): number {
    for (let i = this.#count - 1; i >= 0; i--) if (this.#held[i] === lease) return i;
    return -1;
  }

  #beat(): void {
    const now = Date.now();
    for (const lease of this.#held.slice(0, this.#count)) this.#renew(lease!, now).catch(() => {});
  }
}
