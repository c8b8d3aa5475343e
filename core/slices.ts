// Work on large JSON in slices with a turn of the event loop between them, so that one request's megabytes never hold
// every other request (a health check, a stream's next frame) waiting until they are done.

/** Bytes of JSON worked through between two turns of the event loop; JSON up to this size is handled in one go. */
export const SLICE_BYTES = 1024 * 1024;

/** A turn of the event loop: what other requests have waiting (I/O, timers) runs before the caller goes on. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A turn of the event loop after work on a body of `bytes`, when it is large enough to have held the loop. */
export const turnAfter = (bytes: number): Promise<void> | undefined => (bytes > SLICE_BYTES ? nextTurn() : undefined);

/** `Buffer.concat(chunks, size)`; a large one copied a slice at a time, with a turn of the event loop after each. */
export async function join(chunks: Buffer[], size: number): Promise<Buffer> {
  if (size <= SLICE_BYTES) return Buffer.concat(chunks, size);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let copied = 0;
  for (const chunk of chunks) {
    at += chunk.copy(out, at);
    if ((copied += chunk.length) < SLICE_BYTES) continue;
    copied = 0;
    await nextTurn();
  }
  return out;
}

/** JSON text of about this length at most is written by one JSON.stringify; a longer string, in pieces this long. */
const PIECE = 64 * 1024;

const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object';

/** Roughly what is left of `left` characters once the JSON text of `v` is written (below 0: it did not fit, and no more was counted). */
function room(v: unknown, left: number): number {
  if (typeof v === 'string') return left - v.length - 2;
  if (!isContainer(v)) return left - 8;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && left >= 0; i++) left = room(v[i], left - 1);
    return left;
  }
  for (const k in v) {
    if (left < 0) break;
    if (Object.hasOwn(v, k)) left = room((v as Record<string, unknown>)[k], left - k.length - 4);
  }
  return left;
}

/** What JSON writes for `value` under `key`: the result of its toJSON when it has one. */
function jsonValue(value: unknown, key: string): unknown {
  return isContainer(value) && typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(k: string): unknown }).toJSON(key) : value;
}

/** Values JSON has no text for: left out of objects, null in arrays. */
const textless = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** The end of the piece of `s` that starts at `from`: never between the two halves of a surrogate pair. */
function pieceEnd(s: string, from: number): number {
  const end = Math.min(s.length, from + PIECE);
  const last = s.charCodeAt(end - 1);
  return end < s.length && last >= 0xd800 && last <= 0xdbff ? end - 1 : end;
}

/**
 * The JSON text of a value of plain data (toJSON already applied, one JSON has text for) in pieces that join to what
 * JSON.stringify writes: long strings cut, large arrays and objects walked, anything smaller written by one JSON.stringify.
 */
function* pieces(v: unknown): Generator<string> {
  if (typeof v === 'string' && v.length > PIECE) {
    yield '"';
    for (let i = 0; i < v.length;) {
      const end = pieceEnd(v, i);
      yield JSON.stringify(v.slice(i, end)).slice(1, -1);
      i = end;
    }
    yield '"';
  } else if (!isContainer(v) || room(v, PIECE) >= 0) {
    yield JSON.stringify(v);
  } else if (Array.isArray(v)) {
    yield '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ',';
      const e = jsonValue(v[i], String(i));
      if (textless(e)) yield 'null';
      else yield* pieces(e);
    }
    yield ']';
  } else {
    let sep = '{';
    for (const k of Object.keys(v)) {
      const m = jsonValue((v as Record<string, unknown>)[k], k);
      if (textless(m)) continue;
      yield `${sep}${JSON.stringify(k)}:`;
      sep = ',';
      yield* pieces(m);
    }
    yield sep === '{' ? '{}' : '}';
  }
}

/**
 * Hands `take` the JSON text of `value`: whole when it is small, else a slice of about SLICE_BYTES at a time, with a
 * turn of the event loop after each.
 */
async function inSlices(value: unknown, take: (text: string) => void): Promise<void> {
  if (room(value, SLICE_BYTES) >= 0) return take(JSON.stringify(value));
  let text = '';
  for (const piece of pieces(jsonValue(value, ''))) {
    text += piece;
    if (text.length < SLICE_BYTES) continue;
    take(text);
    text = '';
    await nextTurn();
  }
  take(text);
}

/** `JSON.stringify(value)`, a slice at a time when it is large. */
export async function stringify(value: unknown): Promise<string> {
  let all = '';
  await inSlices(value, (text) => { all += text; });
  return all;
}

/** `Buffer.from(JSON.stringify(value))`, a slice at a time when it is large. */
export async function serialize(value: unknown): Promise<Buffer> {
  const done: Buffer[] = [];
  let size = 0;
  await inSlices(value, (text) => {
    const bytes = Buffer.from(text);
    done.push(bytes);
    size += bytes.length;
  });
  return done.length === 1 ? done[0] : join(done, size);
}
