// Columns of the memory store's per-request state (expiring-map.ts, memory-index.ts, file-journal.ts): arrays of a fixed
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
  return b;
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
