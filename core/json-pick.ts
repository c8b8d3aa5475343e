// Reads named parts of a JSON text without parsing the rest: the relay meters a whole answer by its usage, and for
// answers made mostly of other things (an embedding's thousands of numbers, an image's base64) JSON.parse of the whole
// costs far more than those few fields. What is skipped is stepped over natively (indexOf to a string's closing quote,
// a regular expression from bracket to bracket), not parsed and not validated: a text JSON.parse would refuse can
// still give its parts (the relay sends the bytes as they came either way).

/**
 * The parts to read: a field to parse whole (`true`), or a field of an object (or, under '*', each element of an
 * array) to read the same way. `{ usage: true, choices: { '*': { finish_reason: true } } }` reads
 * `{ usage: {...}, choices: [{ finish_reason: 'stop' }, ...] }` out of a chat completion.
 */
export interface JsonPick { readonly [field: string]: true | JsonPick }

/** Inside a container: a string's start or a bracket (test() and lastIndex: no match object made). */
const STRUCTURE = /["{}[\]]/g;

class Picker {
  readonly #t: string;
  i = 0;

  constructor(text: string) { this.#t = text; }

  fail(): never { throw new SyntaxError(`JSON pick: unexpected input at ${this.i}`); }

  space(): void {
    const t = this.#t;
    let c = t.charCodeAt(this.i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = t.charCodeAt(++this.i);
  }

  /** At an opening quote: past the closing one (the next quote not escaped: after an even run of backslashes). */
  string(): void {
    const t = this.#t;
    let q = this.i;
    for (;;) {
      q = t.indexOf('"', q + 1);
      if (q === -1) this.fail();
      let b = q - 1;
      while (t.charCodeAt(b) === 92 /* \\ */) b--;
      if ((q - 1 - b) % 2 === 0) break;
    }
    this.i = q + 1;
  }

  /** At a value: past it. */
  skip(): void {
    const t = this.#t;
    const c = t.charCodeAt(this.i);
    if (c === 34 /* " */) { this.string(); return; }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      let depth = 0;
      STRUCTURE.lastIndex = this.i;
      for (;;) {
        if (!STRUCTURE.test(t)) this.fail();
        const at = STRUCTURE.lastIndex - 1;
        const ch = t.charCodeAt(at);
        if (ch === 34 /* " */) {
          this.i = at;
          this.string();
          STRUCTURE.lastIndex = this.i;
        } else if (ch === 123 || ch === 91) depth++;
        else if (--depth === 0) { this.i = at + 1; return; }
      }
    }
    // A number, true, false or null: to the next separator.
    let i = this.i;
    for (let d = t.charCodeAt(i); d === d && d !== 44 && d !== 125 && d !== 93 && d !== 32 && d !== 10 && d !== 13 && d !== 9; d = t.charCodeAt(++i));
    this.i = i;
  }

  /** At a value: it, parsed (JSON.parse of its text). */
  whole(): unknown {
    const from = this.i;
    this.skip();
    return JSON.parse(this.#t.slice(from, this.i));
  }

  /** At a value: the parts `pick` names of an object or array; any other value whole. */
  value(pick: true | JsonPick): unknown {
    if (pick === true) return this.whole();
    const c = this.#t.charCodeAt(this.i);
    if (c === 123 /* { */) return this.object(pick);
    if (c === 91 /* [ */) return this.array(pick);
    return this.whole();
  }

  object(pick: JsonPick): Record<string, unknown> {
    const t = this.#t;
    const out: Record<string, unknown> = {};
    this.i++;
    this.space();
    if (t.charCodeAt(this.i) === 125 /* } */) { this.i++; return out; }
    for (;;) {
      if (t.charCodeAt(this.i) !== 34) this.fail();
      const from = this.i;
      this.string();
      const raw = t.slice(from + 1, this.i - 1);
      const name = raw.includes('\\') ? (JSON.parse(t.slice(from, this.i)) as string) : raw;
      this.space();
      if (t.charCodeAt(this.i) !== 58 /* : */) this.fail();
      this.i++;
      this.space();
      // Own fields of the pick only (one named like Object.prototype's, 'constructor' say, is skipped); a later
      // duplicate wins, as in JSON.parse.
      if (!Object.hasOwn(pick, name)) this.skip();
      else if (name !== '__proto__') out[name] = this.value(pick[name]);
      else Object.defineProperty(out, name, { value: this.value(pick[name]), writable: true, enumerable: true, configurable: true });
      this.space();
      const sep = t.charCodeAt(this.i++);
      if (sep === 125 /* } */) return out;
      if (sep !== 44 /* , */) this.fail();
      this.space();
    }
  }

  array(pick: JsonPick): unknown[] {
    const t = this.#t;
    const each = pick['*'];
    const out: unknown[] = [];
    this.i++;
    this.space();
    if (t.charCodeAt(this.i) === 93 /* ] */) { this.i++; return out; }
    for (;;) {
      if (each === undefined) this.skip();
      else out.push(this.value(each));
      this.space();
      const sep = t.charCodeAt(this.i++);
      if (sep === 93 /* ] */) return out;
      if (sep !== 44 /* , */) this.fail();
      this.space();
    }
  }
}

/**
 * The parts of the JSON object `text` that `pick` names (fields it lacks are absent); a text that is not an object
 * (an array, a scalar) is parsed whole. Throws a SyntaxError when the text is malformed along the way (the parts
 * skipped are not checked).
 */
export function pickJson(text: string, pick: JsonPick): unknown {
  const p = new Picker(text);
  p.space();
  if (text.charCodeAt(p.i) !== 123 /* { */) return JSON.parse(text);
  return p.object(pick);
}
