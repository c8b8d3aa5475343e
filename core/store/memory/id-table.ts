// Request ids known by a 64-bit hash in an open-addressing table of typed arrays, each with a 32-bit value: no id kept,
// nothing for the collector to trace (docs/performance.md). Two ids alike in all 64 bits are one (1 in 10^14 at 10^5).

import { release } from './columns.ts';

const MIN_CAPACITY = 16;
/** What an empty table starts with: a key's ledger holds several tables, most of them never used. */
const NONE = new Int32Array(0);

/** The last hashId's halves (never both 0: an empty cell); a typed array, as numbers past 2^30 in variables are boxed. */
export const H = new Int32Array(2);

/** The id H holds the hash of: a request's id is hashed by several tables in a row. */
let hashed: string | undefined;

/** Hashes an id into H. */
export function hashId(id: string): void {
  if (id === hashed) return;
  hashed = id;
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
  H[0] = a;
  H[1] = a === 0 && b === 0 ? 1 : b;
}

/** Hash (a, b) -> value; linear probing, at most three quarters full, deletion by moving back (no tombstones). */
export class IdTable {
  #k1 = NONE;
  #k2 = NONE;
  #v = NONE;
  #size = 0;

  get size(): number { return this.#size; }
  /** Cells, for a walk over them (occupied, value). */
  get capacity(): number { return this.#k1.length; }
  occupied(cell: number): boolean { return this.#k1[cell] !== 0 || this.#k2[cell] !== 0; }
  value(cell: number): number { return this.#v[cell]; }
  setValue(cell: number, value: number): void { this.#v[cell] = value; }

  /** The cell of hash (a, b), or -1. */
  find(a: number, b: number): number {
    const k1 = this.#k1, k2 = this.#k2;
    if (k1.length === 0) return -1;
    const mask = k1.length - 1;
    for (let i = a & mask; ; i = (i + 1) & mask) {
      const x = k1[i], y = k2[i];
      if (x === a && y === b) return i;
      if (x === 0 && y === 0) return -1;
    }
  }

  /** Adds hash (a, b), which must not be in the table. */
  add(a: number, b: number, value: number): void {
    if ((this.#size + 1) * 4 > this.#k1.length * 3) this.#resize(Math.max(MIN_CAPACITY, this.#k1.length * 2));
    this.#insert(a, b, value);
    this.#size++;
  }

  /** Empties a cell, moving back the cells of its probe run (a walk looks at it again); shrink resizes afterwards. */
  remove(cell: number): void {
    const k1 = this.#k1, k2 = this.#k2, v = this.#v;
    const mask = k1.length - 1;
    let hole = cell;
    for (let j = (hole + 1) & mask; k1[j] !== 0 || k2[j] !== 0; j = (j + 1) & mask) {
      const home = k1[j] & mask;
      // j stays where it is when its home lies cyclically in (hole, j]
      if (hole <= j ? home > hole && home <= j : home > hole || home <= j) continue;
      k1[hole] = k1[j];
      k2[hole] = k2[j];
      v[hole] = v[j];
      hole = j;
    }
    k1[hole] = 0;
    k2[hole] = 0;
    this.#size--;
  }

  /** A table left an eighth full is halved. */
  shrink(): void {
    if (this.#k1.length > MIN_CAPACITY && this.#size * 8 < this.#k1.length) this.#resize(this.#k1.length / 2);
  }

  #insert(a: number, b: number, value: number): void {
    const k1 = this.#k1, k2 = this.#k2;
    const mask = k1.length - 1;
    let i = a & mask;
    while (k1[i] !== 0 || k2[i] !== 0) i = (i + 1) & mask;
    k1[i] = a;
    k2[i] = b;
    this.#v[i] = value;
  }

  #resize(capacity: number): void {
    const k1 = this.#k1, k2 = this.#k2, v = this.#v;
    this.#k1 = new Int32Array(capacity);
    this.#k2 = new Int32Array(capacity);
    this.#v = new Int32Array(capacity);
    for (let i = 0; i < k1.length; i++) if (k1[i] !== 0 || k2[i] !== 0) this.#insert(k1[i], k2[i], v[i]);
    release(k1);
    release(k2);
    release(v);
  }
}
