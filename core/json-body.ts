// A request body's JSON: its bytes checked before they are parsed (nesting depth, a field named twice where the gateway
// reads what it decides on), then parsed.
import { coreErrors, type GatewayError } from './errors.ts';

/**
 * Deepest nesting of objects and arrays a request body may have. Far beyond any real request (a deep tool schema
 * nests a few dozen levels), and low enough that every later walk of the body (hashing, re-serialising, translating)
 * stays well inside the stack.
 */
export const MAX_JSON_DEPTH = 400;

/**
 * One pass over a JSON text's bytes, resumable (run to an offset, then on): the nesting depth, and the field names of
 * the top-level object and of each object directly in it, none of which may come twice. The gateway reads the model,
 * the stream flag and the output cap there (`max_tokens`, `generationConfig.maxOutputTokens`); a second copy would be
 * what JSON.parse keeps (the last) while a natively relayed body reaches the upstream with both.
 */
class BodyScan {
  readonly #buf: Buffer;
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

  constructor(buf: Buffer) { this.#buf = buf; }

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
        if (depth > MAX_JSON_DEPTH) return coreErrors.tooDeep(MAX_JSON_DEPTH);
        const object = c === 123;
        if (depth === 1) this.#object1 = object;
        else if (depth === 2) {
          this.#object2 = object && this.#object1;
          if (this.#object2) this.#names2 = new Set();
        }
        this.#name = object && (depth === 1 || (depth === 2 && this.#object2));
      } else if (c === 125 /* } */ || c === 93 /* ] */) {
        this.#depth--;
        this.#name = false;
      } else if (c === 44 /* , */) {
        const depth = this.#depth;
        this.#name = (depth === 1 && this.#object1) || (depth === 2 && this.#object2);
      }
    }
    this.#i = i;
    return undefined;
  }

  #named(name: string): GatewayError | undefined {
    if (this.#depth === 1) {
      if (this.#names1.has(name)) return coreErrors.duplicateField(name);
      this.#names1.add(name);
      this.#field = name;
    } else if (this.#names2) {
      if (this.#names2.has(name)) return coreErrors.duplicateField(`${this.#field}.${name}`);
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
  try { return JSON.parse(text); } catch (err) { throw coreErrors.invalidJson((err as Error).message); }
}

function asObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw coreErrors.notAnObject();
  return value as Record<string, unknown>;
}

/**
 * The JSON object a body holds, refused (400, in the route's format) when it nests too deep, names a checked field twice,
 * is not JSON or not an object.
 */
export async function parseBody(buf: Buffer): Promise<Record<string, unknown>> {
  const problem = new BodyScan(buf).run(buf.length);
  if (problem) throw problem;
  return asObject(parseJson(buf.toString('utf8')));
}
