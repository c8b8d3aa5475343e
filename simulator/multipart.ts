// A minimal multipart/form-data reader for the image edit uploads, so the simulator needs no form-parsing package.

export interface FormPart {
  name: string;
  /** Present for file fields. */
  filename?: string;
  data: Buffer;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The boundary named by a multipart/form-data content-type, or undefined for any other type. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!/^multipart\/form-data\s*;/i.test(contentType ?? '')) return undefined;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return match?.[1] ?? match?.[2];
}

/** The body's parts in order, or undefined when it is not well-formed (no closing delimiter included). */
export function parseMultipart(raw: Buffer, boundary: string): FormPart[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  // Every delimiter after the first is preceded by a CRLF that belongs to it, not to the part before.
  const separator = Buffer.concat([CRLF, delimiter]);
  let at = raw.indexOf(delimiter);
  if (at === -1) return undefined;
  at += delimiter.length;
  const parts: FormPart[] = [];
  for (;;) {
    if (raw.subarray(at, at + 2).toString('latin1') === '--') return parts;
    const headEnd = raw.indexOf(HEADER_END, at);
    if (headEnd === -1) return undefined;
    const head = raw.subarray(at, headEnd).toString('utf8');
    const end = raw.indexOf(separator, headEnd + HEADER_END.length);
    if (end === -1) return undefined;
    const disposition = /^content-disposition:(.*)$/im.exec(head)?.[1] ?? '';
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) return undefined;
    const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
    parts.push({ name, ...(filename === undefined ? {} : { filename }), data: raw.subarray(headEnd + HEADER_END.length, end) });
    at = end + separator.length;
  }
}
