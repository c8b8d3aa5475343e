// A map from id to a time that mostly grows with insertion (rpm admissions, settle markers), whose oldest entries leave
// from the front in O(1). A Map's own insertion order cannot do that: its iterator walks over every entry deleted since
// the table was last rebuilt, so deleting from the front per request costs O(deleted) each time (measured: 15 to 85 µs
// per request with 100 000 entries). Here the order is an array with a moving head.

export class ExpiringMap {
  readonly #map = new Map<string, number>();
  #ids: string[] = [];
  #times: number[] = [];
  #head = 0;

  get size(): number { return this.#map.size; }
  has(id: string): boolean { return this.#map.has(id); }
  get(id: string): number | undefined { return this.#map.get(id); }
  values(): IterableIterator<number> { return this.#map.values(); }
  /** [id, time] in insertion order of the first setting (a Map's). */
  entries(): IterableIterator<[string, number]> { return this.#map.entries(); }

  /** Sets the time; the entry leaves the front by its latest setting. */
  set(id: string, time: number): void {
    this.#map.set(id, time);
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
    if (this.#map.size >= limit) for (const [id, at] of this.#map) if (expired(at)) this.#map.delete(id);
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
      const at = this.#times[this.#head];
      if (this.#map.get(this.#ids[this.#head]) === at) return at;
      this.#head++;
    }
    return undefined;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#ids.length) {
      this.#ids = this.#ids.slice(this.#head);
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }
}
