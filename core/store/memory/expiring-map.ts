// A map from id to a time that mostly grows with insertion (rpm admissions, settle markers), whose oldest leave from the
// front in O(1) (a Map's front costs O(deleted): docs/performance.md). Ids are known by their hash (id-table.ts), the
// order is typed arrays with a moving head: nothing the collector traces, no id kept alive.
import { toFront } from './columns.ts';
import { H, IdTable, hashId } from './id-table.ts';

/** Slots are renumbered from 0 before they outgrow 32-bit integers (2^30 settings, days at thousands a second). */
const RENUMBER_AT = 2 ** 30;
const MIN_CAPACITY = 16;

export class ExpiringMap {
  /** id hash -> its latest setting's slot. */
  readonly #table = new IdTable();
  // The order: the i-th setting's hash and time at i - #base, up to #len.
  // Empty until the first setting (most of a key's maps are never used).
  #o1 = new Int32Array(0);
  #o2 = new Int32Array(0);
  #times = new Float64Array(0);
  #len = 0;
  #head = 0;
  /** The slot of #o1[0]: slots stay valid as the arrays are compacted. */
  #base = 0;
  readonly #renumberAt: number;

  /** `renumberAt`: for tests, a smaller bound than the default. */
  constructor(renumberAt = RENUMBER_AT) {
    this.#renumberAt = renumberAt;
  }

  get size(): number { return this.#table.size; }

  has(id: string): boolean {
    hashId(id);
    return this.#table.find(H[0], H[1]) >= 0;
  }

  get(id: string): number | undefined {
    hashId(id);
    const cell = this.#table.find(H[0], H[1]);
    return cell < 0 ? undefined : this.#timeAt(cell);
  }

  /** get() of the id whose hash (id-table.ts hashId) is (a, b). */
  getHashed(a: number, b: number): number | undefined {
    const cell = this.#table.find(a, b);
    return cell < 0 ? undefined : this.#timeAt(cell);
  }

  /** The times of the entries (in no particular order). */
  *values(): IterableIterator<number> {
    const t = this.#table;
    for (let i = 0; i < t.capacity; i++) if (t.occupied(i)) yield this.#timeAt(i);
  }

  /** Sets the time; the entry leaves the front by its latest setting. */
  set(id: string, time: number): void {
    hashId(id);
    // Full: the order moves to the front, into arrays twice as large when at least three quarters of it is live (at
    // half, a steady load kept arrays far larger than their entries: docs/performance.md).
    if (this.#len === this.#o1.length) this.#reorder((this.#len - this.#head) * 4 >= this.#len * 3 ? Math.max(MIN_CAPACITY, this.#len * 2) : this.#len);
    const at = this.#len++;
    const slot = this.#base + at;
    this.#o1[at] = H[0];
    this.#o2[at] = H[1];
    this.#times[at] = time;
    const cell = this.#table.find(H[0], H[1]);
    if (cell >= 0) this.#table.setValue(cell, slot);
    else this.#table.add(H[0], H[1], slot);
  }

  /** Its slot in the order is skipped when the head reaches it. */
  delete(id: string): boolean {
    hashId(id);
    const cell = this.#table.find(H[0], H[1]);
    if (cell < 0) return false;
    this.#table.remove(cell);
    this.#table.shrink();
    return true;
  }

  /** Deletes the expired entries at the front, and all of them when `limit` is still reached; returns the size. */
  prune(expired: (time: number) => boolean, limit = Infinity): number {
    const t = this.#table;
    for (let cell = this.#front(); cell >= 0 && expired(this.#times[this.#head]); cell = this.#front()) {
      t.remove(cell);
      this.#head++;
    }
    if (t.size >= limit) {
      // A removal moves later cells back, so the cell is looked at again.
      for (let i = 0; i < t.capacity; i++) while (t.occupied(i) && expired(this.#timeAt(i))) t.remove(i);
    }
    t.shrink();
    this.#compact();
    return t.size;
  }

  /** Deletes the oldest entry. */
  dropOldest(): void {
    const cell = this.#front();
    if (cell < 0) return;
    this.#table.remove(cell);
    this.#head++;
    this.#table.shrink();
    this.#compact();
  }

  /** The table cell of the first setting in the order that is still its entry's latest, skipping the others; or -1. */
  #front(): number {
    while (this.#head < this.#len) {
      const cell = this.#table.find(this.#o1[this.#head], this.#o2[this.#head]);
      if (cell >= 0 && this.#table.value(cell) === this.#base + this.#head) return cell;
      this.#head++;
    }
    return -1;
  }

  /** Once half of the order is behind the head, the rest moves to the front (into arrays half as large when a quarter would do). */
  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#len) {
      const live = this.#len - this.#head;
      this.#reorder(live * 4 < this.#o1.length ? Math.max(MIN_CAPACITY, this.#o1.length / 2) : this.#o1.length);
      if (this.#base + this.#len >= this.#renumberAt) this.#renumber();
    }
  }

  /** The order from the head, moved to the front of arrays of `capacity` cells. */
  #reorder(capacity: number): void {
    const from = this.#head, to = this.#len;
    this.#o1 = toFront(this.#o1, from, to, capacity);
    this.#o2 = toFront(this.#o2, from, to, capacity);
    this.#times = toFront(this.#times, from, to, capacity);
    this.#base += from;
    this.#len = to - from;
    this.#head = 0;
  }

  /** Slots from 0 again: each entry's latest setting gets its position in the (just compacted) arrays. */
  #renumber(): void {
    const t = this.#table;
    for (let i = 0; i < t.capacity; i++) if (t.occupied(i)) t.setValue(i, t.value(i) - this.#base);
    this.#base = 0;
  }

  #timeAt(cell: number): number { return this.#times[this.#table.value(cell) - this.#base]; }
}
