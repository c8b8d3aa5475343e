// A request body's JSON: its bytes checked before they are parsed (nesting depth, a field named twice where the gateway
// reads what it decides on), then parsed; a large body in slices with a turn of the event loop after each (slices.ts).
import { coreErrors, type GatewayError } from './errors.ts';
import { nextTurn, SLICE_BYTES } from './slices.ts';

/**
 * Deepest nesting of objects and arrays a request body may have. Far beyond any real request (a deep tool schema
 * nests a few dozen levels), and low enough that every later walk of the body (hashing, re-serialising, translating)
 * stays well inside the stack.
 */
export const MAX_JSON_DEPTH = 400;

/** Where a large body's parts lie: a top-level field's value, and when it is an array, its brackets and elements. */
interface Member { name: string; from: number; to: number; open?: number; close?: number; items?: number[] }

/**
 * One pass over a JSON text's bytes, resumable (run to an offset, then on): the nesting depth, and the field names of
 * the top-level object and of each object directly in it, none of which may come twice. The gateway reads the model,
 * the stream flag and the output cap there (`max_tokens`, `generationConfig.maxOutputTokens`); a second copy would be
 * what JSON.parse keeps (the last) while a natively relayed body reaches the upstream with both. For a large body it
 * also notes where each top-level field's value lies, and each element of those that are arrays (`members`).
 */
class BodyScan {
  readonly #buf: Buffer;
  readonly members: Member[] | undefined;
  #i = 0;
  #depth = 0;
  /** The next string is a field name: just after `{` or `,` in an object whose names are checked. */
  #name = false;
  /** The container at depth 1 (the body) and at depth 2 is an object. */
  #object1 = false;
  #object2 = false;
  readonly #names1 = new Set<string>();
  #names2: Set<string> | undefined;
  /** The last top-level name: the field whose value is the object open at depth 2. */
  #field = '';
  /** The top-level field being read, while members are noted; `at` is where its array's current element began. */
  #member: Member | undefined;
  #at = 0;

  constructor(buf: Buffer, members: boolean) {
    this.#buf = buf;
    this.members = members ? [] : undefined;
  }

  /** Scans up to the offset `until` (or past it, to the end of a string begun before it); the first problem found. */
  run(until: number): GatewayError | undefined {
    const buf = this.#buf;
    const n = buf.length;
    let i = this.#i;
    for (; i < until; i++) {
      const c = buf[i];
      if (c === 34 /* " */) {
        const end = closingQuote(buf, i);
        if (end === -1) { i = n; break; } // unterminated: JSON.parse says so
        if (this.#name) {
          this.#name = false;
          const problem = this.#named(fieldName(buf, i, end));
          if (problem) return problem;
        }
        i = end;
      } else if (c === 123 /* { */ || c === 91 /* [ */) {
        const depth = ++this.#depth;
        if (depth > MAX_JSON_DEPTH) return coreErrors.invalid_body({ kind: 'too_deep', max: MAX_JSON_DEPTH });
        const object = c === 123;
        if (depth === 1) this.#object1 = object;
        else if (depth === 2) {
          this.#object2 = object && this.#object1;
          if (this.#object2) this.#names2 = new Set();
          else if (this.#member) { this.#member.open = i; this.#member.items = []; this.#at = i + 1; }
        }
        this.#name = object && (depth === 1 || (depth === 2 && this.#object2));
      } else if (c === 125 /* } */ || c === 93 /* ] */) {
        const depth = this.#depth--;
        this.#name = false;
        if (depth === 1) this.#ended(i);
        else if (depth === 2 && this.#member?.items) { this.#member.items.push(this.#at, i); this.#member.close = i; }
      } else if (c === 44 /* , */) {
        const depth = this.#depth;
        this.#name = (depth === 1 && this.#object1) || (depth === 2 && this.#object2);
        if (depth === 1) this.#ended(i);
        else if (depth === 2 && this.#member?.items) { this.#member.items.push(this.#at, i); this.#at = i + 1; }
      } else if (c === 58 /* : */ && this.#depth === 1 && this.members && this.#object1) {
        this.#member = { name: this.#field, from: i + 1, to: n };
      }
    }
    this.#i = i;
    return undefined;
  }

  /** A top-level field's value ended at `i` (a `,` or the body's `}`). */
  #ended(i: number): void {
    if (!this.#member) return;
    this.#member.to = i;
    this.members!.push(this.#member);
    this.#member = undefined;
  }

  #named(name: string): GatewayError | undefined {
    if (this.#depth === 1) {
      if (this.#names1.has(name)) return coreErrors.invalid_body({ kind: 'duplicate', name }, { param: name });
      this.#names1.add(name);
      this.#field = name;
    } else if (this.#names2) {
      if (this.#names2.has(name)) return coreErrors.invalid_body({ kind: 'duplicate', name: `${this.#field}.${name}` }, { param: `${this.#field}.${name}` });
      this.#names2.add(name);
    }
    return undefined;
  }
}

/** The offset of the quote that closes the string opening at `open` (one not escaped: after an even run of backslashes). */
function closingQuote(buf: Buffer, open: number): number {
  for (let q = open; ;) {
    q = buf.indexOf(34, q + 1);
    if (q === -1) return -1;
    let b = q - 1;
    while (buf[b] === 92 /* \ */) b--;
    if ((q - 1 - b) % 2 === 0) return q;
  }
}

/** A field name as JSON.parse reads it (escapes such as \u0065 decoded). */
function fieldName(buf: Buffer, open: number, close: number): string {
  const raw = buf.toString('utf8', open + 1, close);
  if (!raw.includes('\\')) return raw;
  try { return JSON.parse(buf.toString('utf8', open, close + 1)) as string; } catch { return raw; }
}

/** JSON.parse, a syntax error refused as the body's. */
function parseJson(text: string): unknown {
  try { return JSON.parse(text); } catch (err) { throw coreErrors.invalid_json((err as Error).message); }
}

const parseText = (buf: Buffer, from: number, to: number): unknown => parseJson(buf.toString('utf8', from, to));

/** The offset of the first byte from `from` to `to` that is not whitespace (`to` when there is none). */
function nonBlank(buf: Buffer, from: number, to: number): number {
  let i = from;
  for (let c = buf[i]; i < to && (c === 32 || c === 10 || c === 13 || c === 9); c = buf[++i]);
  return i;
}

const blank = (buf: Buffer, from: number, to: number): boolean => nonBlank(buf, from, to) === to;

function asObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw coreErrors.invalid_body({ kind: 'not_an_object' });
  return value as Record<string, unknown>;
}

/**
 * A large body's object, read a part at a time: each top-level field's value, and each element of a large top-level
 * array, by a JSON.parse of its own, with a turn of the event loop after each SLICE_BYTES read. What lies between the
 * parts (names, brackets, separators) is checked by parsing it with a 0 in place of each part: the body is JSON if and
 * only if that and every part are.
 */
async function parseInParts(buf: Buffer, members: Member[]): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  let skeleton = '';
  let last = 0;
  let read = 0;
  const turn = async (bytes: number) => { if ((read += bytes) >= SLICE_BYTES) { read = 0; await nextTurn(); } };
  for (const m of members) {
    skeleton += buf.toString('utf8', last, m.from);
    let value: unknown;
    if (m.items && m.close !== undefined && m.to - m.from > SLICE_BYTES) {
      const list: unknown[] = [];
      const marks: string[] = [];
      for (let k = 0; k < m.items.length; k += 2) {
        const from = m.items[k];
        const to = m.items[k + 1];
        const empty = blank(buf, from, to);
        marks.push(empty ? '' : '0');
        if (!empty) list.push(parseText(buf, from, to));
        await turn(to - from);
      }
      skeleton += `${buf.toString('utf8', m.from, m.open)}[${marks.join(',')}]${buf.toString('utf8', m.close + 1, m.to)}`;
      value = list;
    } else {
      const empty = blank(buf, m.from, m.to);
      skeleton += empty ? '' : '0';
      value = empty ? undefined : parseText(buf, m.from, m.to);
      await turn(m.to - m.from);
    }
    // As JSON.parse makes it: a field named __proto__ is a field, not the object's prototype.
    if (m.name === '__proto__') Object.defineProperty(body, m.name, { value, writable: true, enumerable: true, configurable: true });
    else body[m.name] = value;
    last = m.to;
  }
  skeleton += buf.toString('utf8', last);
  parseJson(skeleton);
  return body;
}

/**
 * The JSON object a body holds, refused (400, in the route's format) when it nests too deep, names a checked field twice,
 * is not JSON or not an object. A body over SLICE_BYTES is scanned a slice at a time, then read in parts
 * (parseInParts), with turns of the event loop between.
 */
export async function parseBody(buf: Buffer): Promise<Record<string, unknown>> {
  if (buf.length <= SLICE_BYTES) {
    const problem = new BodyScan(buf, false).run(buf.length);
    if (problem) throw problem;
    return asObject(parseText(buf, 0, buf.length));
  }
  const scan = new BodyScan(buf, true);
  for (let at = 0; at < buf.length; at += SLICE_BYTES) {
    const problem = scan.run(Math.min(buf.length, at + SLICE_BYTES));
    if (problem) throw problem;
    await nextTurn();
  }
  // A body that is not an object has no fields to read apart: JSON.parse says what it is.
  if (buf[nonBlank(buf, 0, buf.length)] !== 123 /* { */) return asObject(parseText(buf, 0, buf.length));
  return parseInParts(buf, scan.members!);
}
