// Reads small text fields of a multipart/form-data body in place: parts are found by offset, file contents are never copied or decoded.
const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;
// Header lines and text fields of interest are short; anything longer is not what we look for and is not copied.
const MAX_HEADER_LINE = 8 * 1024;
const MAX_FIELD_BYTES = 4 * 1024;

/** The boundary parameter of a multipart content type, quoted or not. */
export function multipartBoundary(contentType: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

export const isMultipart = (contentType: string): boolean => /^\s*multipart\/form-data\s*(;|$)/i.test(contentType);

interface PartHead { name?: string; file: boolean; contentStart: number }

/** Header lines from `at` up to the blank line; \r\n and bare \n both end a line. Undefined when malformed or oversized. */
function readHead(body: Buffer, at: number): PartHead | undefined {
  const head: PartHead = { file: false, contentStart: -1 };
  let p = at;
  for (;;) {
    const lf = body.indexOf(LF, p);
    if (lf === -1 || lf - p > MAX_HEADER_LINE) return undefined;
    const end = lf > p && body[lf - 1] === CR ? lf - 1 : lf;
    if (end === p) { head.contentStart = lf + 1; return head; }
    const line = body.toString('utf8', p, end);
    if (/^content-disposition\s*:/i.test(line)) {
      const name = /;\s*name\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(line);
      if (name) head.name = name[1] !== undefined ? name[1].replace(/\\(.)/g, '$1') : name[2];
      head.file = /;\s*filename\*?\s*=/i.test(line);
    }
    p = lf + 1;
  }
}

interface Range { start: number; end: number }

/**
 * Where the text fields named in `names` lie (first occurrence each). File parts (those with a filename, such as `image`
 * or `image[]`) are skipped whatever their name. Stops as soon as every wanted field is found.
 */
function fieldRanges(body: Buffer, contentType: string, names: readonly string[]): Record<string, Range> {
  const found: Record<string, Range> = {};
  const boundary = multipartBoundary(contentType);
  if (!boundary) return found;
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    let p = at + delimiter.length;
    if (body[p] === DASH && body[p + 1] === DASH) break; // the closing delimiter
    while (body[p] === 0x20 || body[p] === 0x09) p++; // transport padding
    if (body[p] === CR) p++;
    if (body[p] !== LF) break;
    const head = readHead(body, p + 1);
    if (!head) break;
    const next = body.indexOf(delimiter, head.contentStart);
    if (next === -1) break;
    if (head.name !== undefined && !head.file && names.includes(head.name) && !(head.name in found)) {
      // The line break before a delimiter belongs to the delimiter, not to the value.
      let end = next;
      if (body[end - 1] === LF) end--;
      if (body[end - 1] === CR) end--;
      if (end - head.contentStart <= MAX_FIELD_BYTES) found[head.name] = { start: head.contentStart, end: Math.max(end, head.contentStart) };
      if (names.every((n) => n in found)) break;
    }
    at = next;
  }
  return found;
}

/** The text fields named in `names` (first occurrence each); file contents are never decoded. */
export function readFormFields(body: Buffer, contentType: string, names: readonly string[]): Record<string, string> {
  const ranges = fieldRanges(body, contentType, names);
  return Object.fromEntries(Object.entries(ranges).map(([name, r]) => [name, body.toString('utf8', r.start, r.end)]));
}

/** A copy of the body with one text field's value replaced, or undefined when the field is absent. */
export function replaceFormField(body: Buffer, contentType: string, name: string, value: string): Buffer | undefined {
  const range = fieldRanges(body, contentType, [name])[name];
  if (!range) return undefined;
  return Buffer.concat([body.subarray(0, range.start), Buffer.from(value, 'utf8'), body.subarray(range.end)]);
}
