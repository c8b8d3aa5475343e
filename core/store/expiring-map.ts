// A map from id to a time that mostly grows with insertion (rpm admissions, settle markers), whose oldest entries leave
// from the front in O(1). A Map's own insertion order cannot do that: its iterator walks over every entry deleted since
// the table was last rebuilt, so deleting from the front per request costs O(deleted) each time (measured: 15 to 85 µs
// per request with 100 000 entries). Here the order is an array with a moving head.
//
// The Map holds each id's slot in that array (a small integer), not its time: an epoch-millisecond time is too large for
// a small integer, so as a Map value each one was a heap number of its own (16 bytes, allocated per request and kept as
// long as the entry); the times array holds them unboxed.

/** Slots are renumbered from 0 before they outgrow V8's small integers (2^30 settings, days at thousands a second). */
const RENUMBER_AT = 2 ** 30;

export class ExpiringMap {
  readonly #map = new Map<string, number>(); // id -> its latest setting's slot
  #ids: string[] = [];
  #times: number[] = [];
  #head = 0;
  /** The slot of #ids[0]: slots stay valid as the arrays are compacted. */
  #base = 0;
  readonly #renumberAt: number;

  /** `renumberAt`: for tests, a smaller bound than the default. */
  constructor(renumberAt = RENUMBER_AT) {
    this.#renumberAt = renumberAt;
  }

  get size(): number { return this.#map.size; }
  has(id: string): boolean { return this.#map.has(id); }

  get(id: string): number | undefined {
    const slot = this.#map.get(id);
    return slot === undefined ? undefined : this.#times[slot - this.#base];
  }

  *values(): IterableIterator<number> {
    for (const slot of this.#map.values()) yield this.#times[slot - this.#base];
  }

  /** [id, time] in insertion order of the first setting (a Map's). */
  *entries(): IterableIterator<[string, number]> {
    for (const [id, slot] of this.#map) yield [id, this.#times[slot - this.#base]];
  }

  /** Sets the time; the entry leaves the front by its latest setting. */
  set(id: string, time: number): void {
    this.#map.set(id, this.#base + this.#ids.length);
    this.#ids.push(id);
    this.#times.push(time);
  }

  /** Its slot in the order is skipped when the head reaches it. */
  delete(id: string): boolean { return this.#map.delete(id); }

  /**
   * Deletes the entries at the front whose time is `expired`; when what is left still reaches `limit`, every expired
   * entry (times are only mostly in insertion order). Returns the size.
   */
  prune(expired: (time: number) => boolean, limit = Infinity): number {
    for (let at = this.#front(); at !== undefined && expired(at); at = this.#front()) this.#map.delete(this.#ids[this.#head++]);
    if (this.#map.size >= limit) for (const [id, slot] of this.#map) if (expired(this.#times[slot - this.#base])) this.#map.delete(id);
    this.#compact();
    return this.#map.size;
  }

  /** Deletes the oldest entry. */
  dropOldest(): void {
    if (this.#front() === undefined) return;
    this.#map.delete(this.#ids[this.#head++]);
    this.#compact();
  }

  /** The time of the first slot that is still its entry's latest setting, skipping the others. */
  #front(): number | undefined {
    while (this.#head < this.#ids.length) {
      if (this.#map.get(this.#ids[this.#head]) === this.#base + this.#head) return this.#times[this.#head];
      this.#head++;
    }
    return undefined;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#ids.length) {
      this.#ids = this.#ids.slice(this.#head);
      this.#times = this.#times.slice(this.#head);
      this.#base += this.#head;
      this.#head = 0;
      if (this.#base + this.#ids.length >= this.#renumberAt) this.#renumber();
    }
  }

  /** Slots from 0 again: each live entry's latest setting gets its position in the (just compacted) arrays. */
  #renumber(): void {
    for (let i = 0; i < this.#ids.length; i++) {
      const id = this.#ids[i];
      if (this.#map.get(id) === this.#base + i) this.#map.set(id, i);
    }
    this.#base = 0;
  }
}
