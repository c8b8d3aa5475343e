// Columns of per-request state (expiring-map.ts, record-index.ts, file/journal.ts): fixed-length arrays holding entries
// from a head to a length, moved to the front or into larger arrays, never reallocated per request.

/** Entries from .. to (`stride` cells each) at the front of `a` if it holds `capacity`, else of a new array that does. */
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
 * Frees a replaced array's (or a written batch's) bytes now by detaching its buffer, not at a full collection, which
 * may be long in coming (docs/performance.md). Only an array that is its whole buffer, of more than 64 bytes (V8 heap).
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
