// Columns of the memory store's per-request state (expiring-map.ts, record-index.ts, file/journal.ts): arrays of a fixed
// length holding the entries from a head to a length, moved to the front when the head has left enough behind, and
// into larger arrays when they are full. Never grown by push or splice, so no array is reallocated per request.

/**
 * The entries from .. to (each `stride` cells) at the front of `a` when `capacity` entries is its size, else of a new
 * array of `capacity` entries; the cells past them are left as they were (the callers never read them).
 */
export function toFront<T extends Int32Array | Float64Array>(a: T, from: number, to: number, capacity: number, stride = 1): T {
  if (capacity * stride === a.length) {
    a.copyWithin(0, from * stride, to * stride);
    return a;
  }
  const b = new (a.constructor as new (n: number) => T)(capacity * stride);
  b.set(a.subarray(from * stride, to * stride));
  release(a);
  return b;
}

/**
 * An array just replaced (by a larger or smaller one), or a batch's record bytes once written, lets go of its memory
 * now, not at the next full collection. A batch's bytes (up to a second of records, or file/store.ts FLUSH_BYTES) live
 * past two scavenges too, and the writer thread, which makes little garbage of its own, ran a full collection only when
 * V8's limit of external memory forced it (docs/performance.md). Typed arrays keep their bytes outside V8's heap, and
 * the object that holds them is old by the time it is replaced (these live as long as the state they hold): only a full
 * collection would find it dead. Detaching the buffer (ArrayBuffer.prototype.transfer) frees it at once. Only an array
 * that is its buffer whole; one of 64 bytes or less lives inside V8's heap (asking for its buffer would move it out
 * first) and is left to the collector.
 */
export function release(a: ArrayBufferView): void {
  if (a.byteLength > 64 && a.byteOffset === 0 && a.buffer.byteLength === a.byteLength && a.buffer instanceof ArrayBuffer) a.buffer.transfer(0);
}

/** An array of `n` empty slots (of strings). */
export const slots = (n: number): (string | undefined)[] => new Array<string | undefined>(n).fill(undefined);

/** toFront for slots of strings, which also empties the slots it leaves (they must not keep a string alive). */
export function slotsToFront(a: (string | undefined)[], from: number, to: number, capacity: number): (string | undefined)[] {
  if (capacity === a.length) return a.copyWithin(0, from, to).fill(undefined, to - from, to);
  const b = slots(capacity);
  for (let i = from; i < to; i++) b[i - from] = a[i];
  return b;
}
