// The records batch.ts waits to write: their lines as bytes (Lines), their rollups summed as they come (RecordSums),
// not objects on V8's heap that lived long enough to be promoted (docs/performance.md).
import type { UsageRecord } from '../types.ts';
import { COUNTER_FIELDS } from '../rollup.ts';
import { settlementOf } from '../rules/ledger.ts';
import { summaryFields } from '../summary.ts';

/** The waiting records' lines start in a buffer this large (~400 records), which grows as needed. */
const LINES_BYTES = 256 * 1024;
/** A buffer grown beyond this (an outage's backlog) is let go once its records are in chunks. */
const LINES_KEEP_BYTES = 4 * 1024 * 1024;

/** A record's line `<time>\t<JSON>\n` (lua/log.lua): `len` bytes at `at` in `src` (the Lines, then its chunk's text). */
export interface Entry { id: string; time: number; src: Buffer; at: number; len: number }

/** The lines of the records waiting, one after another. Emptied once they are in chunks (each chunk's text is its own). */
export class Lines {
  #buf = Buffer.allocUnsafe(LINES_BYTES);
  #size = 0;

  /** Writes record `id`'s line, `<time>\t<json>\n`, and returns its entry. */
  add(id: string, time: number, json: string): Entry {
    const most = 24 + 3 * json.length; // UTF-8 takes at most 3 bytes per UTF-16 unit
    if (this.#size + most > this.#buf.length) {
      // A larger one, from its start: the lines written so far stay in the old one, where their entries point.
      this.#buf = Buffer.allocUnsafe(Math.max(2 * this.#buf.length, most));
      this.#size = 0;
    }
    const at = this.#size;
    let p = at + this.#buf.write(`${time}\t`, at, 'latin1');
    p += this.#buf.write(json, p);
    this.#buf[p++] = 0x0a;
    this.#size = p;
    return { id, time, src: this.#buf, at, len: p - at };
  }

  /** No entry points here any more: start again (in a smaller buffer after an outage's backlog). */
  clear(): void {
    this.#size = 0;
    if (this.#buf.length > LINES_KEEP_BYTES) this.#buf = Buffer.allocUnsafe(LINES_BYTES);
  }
}

/** What log-key.lua adds to a key's six rollup hashes (totals, day, day/model, hour, hour/model, rate), summed. */
class KeySums {
  readonly #per = new Map<string, { model: string; hour: string; c: number[] }>();
  readonly #seconds = new Map<number, [number, number]>();
  #duration = 0;
  #count = 0;

  add(r: UsageRecord): void {
    const s = settlementOf(r);
    const hour = String(s.hour).padStart(2, '0');
    let p = this.#per.get(`${hour}:${s.model}`);
    if (!p) this.#per.set(`${hour}:${s.model}`, (p = { model: s.model, hour, c: COUNTER_FIELDS.map(() => 0) }));
    for (let j = 0; j < COUNTER_FIELDS.length; j++) p.c[j] += s.counters[COUNTER_FIELDS[j]];
    this.#duration += s.duration;
    this.#count++;
    let sec = this.#seconds.get(s.second);
    if (!sec) this.#seconds.set(s.second, (sec = [0, 0]));
    sec[0]++;
    sec[1] += s.tokens;
  }

  pairs(): [string, number][][] {
    const sums = Array.from({ length: 6 }, () => new Map<string, number>());
    const add = (k: number, field: string, v: number) => sums[k].set(field, (sums[k].get(field) ?? 0) + v);
    for (const { model, hour, c } of this.#per.values()) {
      c.forEach((v, j) => {
        if (v === 0) return;
        const f = COUNTER_FIELDS[j];
        add(0, f, v);
        add(1, f, v);
        add(2, `${f}:${model}`, v);
        add(3, `${hour}:${f}`, v);
        add(4, `${hour}:${f}:${model}`, v);
      });
    }
    add(0, 'duration_ms', this.#duration);
    add(0, 'timed', this.#count);
    for (const [second, [n, tokens]] of this.#seconds) {
      add(5, `${second}:r`, n);
      if (tokens !== 0) add(5, `${second}:t`, tokens);
    }
    return sums.map((m) => [...m]);
  }
}

/** The rollups of a set of records: a key's (log-key.lua) and the gateway-wide ones (log-global.lua), field → increment. */
export class RecordSums {
  readonly key = new KeySums();
  readonly global = new Map<string, number>();

  add(r: UsageRecord): void {
    this.key.add(r);
    for (const [f, v] of summaryFields(r)) this.global.set(f, (this.global.get(f) ?? 0) + v);
  }

  /** The sums of `entries`, from the JSON their lines hold (for a part's records less some: repeats, or kept elsewhere). */
  static of(entries: Entry[]): RecordSums {
    const sums = new RecordSums();
    for (const e of entries) {
      sums.add(JSON.parse(e.src.toString('utf8', e.at + String(e.time).length + 1, e.at + e.len - 1)) as UsageRecord);
    }
    return sums;
  }
}
