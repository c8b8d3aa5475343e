// Records on their way to the writer thread, as bytes outside V8's heap (as strings they lived into the old generation:
// docs/performance.md). Each: key, id and text lengths (uint32), time (float64), then the three as UTF-8.
import { release } from '../memory/columns.ts';
import type { RecordRow } from './rows.ts';

const HEAD = 20;
const START = 64 * 1024;

export class RecordBytes {
  #buf = Buffer.allocUnsafeSlow(START);
  #used = 0;

  /** Bytes of the records added since the last take. */
  get size(): number {
    return this.#used;
  }


  add(key: string, id: string, time: number, json: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for the worst case, then the lengths as written.
    const most = HEAD + 3 * (key.length + id.length + json.length);
    if (this.#used + most > this.#buf.length) this.#grow(this.#used + most);
    const buf = this.#buf;
    const at = this.#used;
    let end = at + HEAD;
    const k = buf.write(key, end);
    end += k;
    const i = buf.write(id, end);
    end += i;
    const j = buf.write(json, end);
    buf.writeUInt32LE(k, at);
    buf.writeUInt32LE(i, at + 4);
    buf.writeUInt32LE(j, at + 8);
    buf.writeDoubleLE(time, at + 12);
    this.#used = end + j;
  }

  /** The records added so far, in a buffer of their own (what a batch carries), and an empty list. */
  take(): Uint8Array {
    const out = new Uint8Array(this.#used);
    out.set(this.#buf.subarray(0, this.#used));
    this.clear();
    return out;
  }

  /** The records added so far, in place (valid until the next add or take). */
  view(): Uint8Array {
    return this.#buf.subarray(0, this.#used);
  }

  clear(): void {
    this.#used = 0;
  }

  #grow(need: number): void {
    let size = this.#buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    this.#buf.copy(next, 0, 0, this.#used);
    release(this.#buf);
    this.#buf = next;
  }
}

/** The records of `bytes` (RecordBytes' layout), in the order they were added. */
export function* readRecords(bytes: Uint8Array): Generator<RecordRow> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < buf.length) {
    const k = buf.readUInt32LE(at);
    const i = buf.readUInt32LE(at + 4);
    const j = buf.readUInt32LE(at + 8);
    const time = buf.readDoubleLE(at + 12);
    const s = at + HEAD;
    yield { key: buf.toString('utf8', s, s + k), id: buf.toString('utf8', s + k, s + k + i), time, json: buf.toString('utf8', s + k + i, s + k + i + j) };
    at = s + k + i + j;
  }
}
