// A map from id to a time that mostly grows with insertion (rpm admissions, settle markers), whose oldest entries leave
// from the front in O(1). A Map's own insertion order cannot do that: its iterator walks over every entry deleted since
// the table was last rebuilt, so deleting from the front per request costs O(deleted) each time (measured: 15 to 85 µs
// per request with 100 000 entries). Here the order is an array with a moving head.
//
// Nothing in it is an object the garbage collector traces. The ids are not kept: each is known by a 64-bit hash of it
// (two 32-bit halves), in an open-addressing table of typed arrays (id hash -> its latest setting's slot in the order),
// and the order holds the hashes and times as unboxed numbers. Kept as strings in a Map, every id stayed alive as long
// as its entry (60 s of admissions for rpm: 300 000 strings at 5 000 requests a second), and every entry was work for
// each full collection. Two ids that share all 64 bits would be one entry: ~1 in 10^14 for a map of 100 000 ids.

/** Slots are renumbered from 0 before they outgrow 32-bit integers (2^30 settings, days at thousands a second). */
const RENUMBER_AT = 2 ** 30;
const MIN_CAPACITY = 16;

let h1 = 0;
let h2 = 0;

/** The two 32-bit halves of an id's hash, into h1 and h2 (never both 0: that marks an empty cell). */
function hashId(id: string): void {
  let a = 0x811c9dc5;
  let b = 0x2545f491;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  // murmur3's finaliser on each half, so every character moves every bit
  a ^= a >>> 16; a = Math.imul(a, 0x85ebca6b); a ^= a >>> 13; a = Math.imul(a, 0xc2b2ae35); a ^= a >>> 16;
  b ^= b >>> 16; b = Math.imul(b, 0x7feb352d); b ^= b >>> 15; b = Math.imul(b, 0x846ca68b); b ^= b >>> 16;
  h1 = a | 0;
  h2 = a === 0 && b === 0 ? 1 : b | 0;
}

export class ExpiringMap {
  // The table: cell i holds hash (k1[i], k2[i]) -> slot[i]; (0, 0) is empty. Linear probing, at most half full.
  #k1 = new Int32Array(MIN_CAPACITY);
  #k2 = new Int32Array(MIN_CAPACITY);
  #slot = new Int32Array(MIN_CAPACITY);
  #size = 0;
  // The order: the i-th setting's hash and time at i - #base, up to #len.
  #o1 = new Int32Array(MIN_CAPACITY);
  #o2 = new Int32Array(MIN_CAPACITY);
  #times = new Float64Array(MIN_CAPACITY);
  #len = 0;
  #head = 0;
  /** The slot of #o1[0]: slots stay valid as the arrays are compacted. */
  #base = 0;
  readonly #renumberAt: number;

  /** `renumberAt`: for tests, a smaller bound than the default. */
  constructor(renumberAt = RENUMBER_AT) {
    this.#renumberAt = renumberAt;
  }

  get size(): number { return this.#size; }

  has(id: string): boolean {
    hashId(id);
    return this.#find(h1, h2) >= 0;
  }

  get(id: string): number | undefined {
    hashId(id);
    const cell = this.#find(h1, h2);
    return cell < 0 ? undefined : this.#times[this.#slot[cell] - this.#base];
  }

  /** The times of the entries (in no particular order). */
  *values(): IterableIterator<number> {
    const k1 = this.#k1, k2 = this.#k2;
    for (let i = 0; i < k1.length; i++) if (k1[i] !== 0 || k2[i] !== 0) yield this.#times[this.#slot[i] - this.#base];
  }

  /** Sets the time; the entry leaves the front by its latest setting. */
  set(id: string, time: number): void {
    hashId(id);
    if (this.#len === this.#o1.length) this.#reorder((this.#len - this.#head) * 2 > this.#len ? this.#len * 2 : this.#len);
    const at = this.#len++;
    const slot = this.#base + at;
    this.#o1[at] = h1;
    this.#o2[at] = h2;
    this.#times[at] = time;
    const cell = this.#find(h1, h2);
    if (cell >= 0) {
      this.#slot[cell] = slot;
      return;
    }
    if ((this.#size + 1) * 2 > this.#k1.length) this.#resize(this.#k1.length * 2);
    this.#insert(h1, h2, slot);
    this.#size++;
  }

  /** Its slot in the order is skipped when the head reaches it. */
  delete(id: string): boolean {
    hashId(id);
    const cell = this.#find(h1, h2);
    if (cell < 0) return false;
    this.#remove(cell);
    this.#shrink();
    return true;
  }

  /**
   * Deletes the entries at the front whose time is `expired`; when what is left still reaches `limit`, every expired
   * entry (times are only mostly in insertion order). Returns the size.
   */
  prune(expired: (time: number) => boolean, limit = Infinity): number {
    for (let cell = this.#front(); cell >= 0 && expired(this.#times[this.#head]); cell = this.#front()) {
      this.#remove(cell);
      this.#head++;
    }
    if (this.#size >= limit) {
      // Removing shifts later cells back, so a cell is looked at again after a removal.
      const k1 = this.#k1, k2 = this.#k2;
      for (let i = 0; i < k1.length; i++) {
        while ((k1[i] !== 0 || k2[i] !== 0) && expired(this.#times[this.#slot[i] - this.#base])) this.#remove(i);
      }
    }
    this.#shrink();
    this.#compact();
    return this.#size;
  }

  /** Deletes the oldest entry. */
  dropOldest(): void {
    const cell = this.#front();
    if (cell < 0) return;
    this.#remove(cell);
    this.#head++;
    this.#shrink();
    this.#compact();
  }

  /** The table cell of the first setting in the order that is still its entry's latest, skipping the others; or -1. */
  #front(): number {
    while (this.#head < this.#len) {
      const cell = this.#find(this.#o1[this.#head], this.#o2[this.#head]);
      if (cell >= 0 && this.#slot[cell] === this.#base + this.#head) return cell;
      this.#head++;
    }
    return -1;
  }

  #find(a: number, b: number): number {
    const k1 = this.#k1, k2 = this.#k2;
    const mask = k1.length - 1;
    for (let i = a & mask; ; i = (i + 1) & mask) {
      const x = k1[i], y = k2[i];
      if (x === a && y === b) return i;
      if (x === 0 && y === 0) return -1;
    }
  }

  #insert(a: number, b: number, slot: number): void {
    const k1 = this.#k1, k2 = this.#k2;
    const mask = k1.length - 1;
    let i = a & mask;
    while (k1[i] !== 0 || k2[i] !== 0) i = (i + 1) & mask;
    k1[i] = a;
    k2[i] = b;
    this.#slot[i] = slot;
  }

  /** Empties a cell and moves back the cells of its probe run that may no longer be reached past it. */
  #remove(cell: number): void {
    const k1 = this.#k1, k2 = this.#k2, s = this.#slot;
    const mask = k1.length - 1;
    let hole = cell;
    for (let j = (hole + 1) & mask; k1[j] !== 0 || k2[j] !== 0; j = (j + 1) & mask) {
      const home = k1[j] & mask;
      // j stays where it is when its home lies cyclically in (hole, j]
      if (hole <= j ? home > hole && home <= j : home > hole || home <= j) continue;
      k1[hole] = k1[j];
      k2[hole] = k2[j];
      s[hole] = s[j];
      hole = j;
    }
    k1[hole] = 0;
    k2[hole] = 0;
    this.#size--;
  }

  /** A table left an eighth full is halved (never while a caller walks its cells). */
  #shrink(): void {
    if (this.#k1.length > MIN_CAPACITY && this.#size * 8 < this.#k1.length) this.#resize(this.#k1.length / 2);
  }

  #resize(capacity: number): void {
    const k1 = this.#k1, k2 = this.#k2, s = this.#slot;
    this.#k1 = new Int32Array(capacity);
    this.#k2 = new Int32Array(capacity);
    this.#slot = new Int32Array(capacity);
    for (let i = 0; i < k1.length; i++) if (k1[i] !== 0 || k2[i] !== 0) this.#insert(k1[i], k2[i], s[i]);
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
    if (capacity === this.#o1.length) {
      this.#o1.copyWithin(0, from, to);
      this.#o2.copyWithin(0, from, to);
      this.#times.copyWithin(0, from, to);
    } else {
      const o1 = new Int32Array(capacity), o2 = new Int32Array(capacity), times = new Float64Array(capacity);
      o1.set(this.#o1.subarray(from, to));
      o2.set(this.#o2.subarray(from, to));
      times.set(this.#times.subarray(from, to));
      this.#o1 = o1;
      this.#o2 = o2;
      this.#times = times;
    }
    this.#base += from;
    this.#len = to - from;
    this.#head = 0;
  }

  /** Slots from 0 again: each entry's latest setting gets its position in the (just compacted) arrays. */
  #renumber(): void {
    const s = this.#slot, k1 = this.#k1, k2 = this.#k2;
    for (let i = 0; i < s.length; i++) if (k1[i] !== 0 || k2[i] !== 0) s[i] -= this.#base;
    this.#base = 0;
  }
}
