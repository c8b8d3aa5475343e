// THE server-sent-events parser and writer: incremental, tolerant of \n, \r\n and \r line ends, keeps each frame's raw bytes.
import { StringDecoder } from 'node:string_decoder';
import type { SseFrame } from '../../core/types.ts';

export class SseParser {
  #decoder = new StringDecoder('utf8');
  #buf = '';
  // Where scanning resumes, so a large frame arriving in small chunks is scanned once, not once per chunk.
  #scan = 0;
  #lineStart = 0;
  #prevLoneCR = false;

  /** Feed bytes; returns every frame completed by them (a frame ends at an empty line). */
  push(chunk: Buffer | string): SseFrame[] {
    this.#buf += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const buf = this.#buf;
    const frames: SseFrame[] = [];
    let frameStart = 0;
    let lineStart = this.#lineStart;
    let prevLoneCR = this.#prevLoneCR;
    let i = this.#scan;
    // The next \n and \r at or after i, found by indexOf (native) rather than a test of every character: a stream's
    // lines are long JSON, its line ends few. -1: none left in what has arrived.
    let lf = buf.indexOf('\n', i);
    let cr = buf.indexOf('\r', i);
    for (;;) {
      if (lf !== -1 && lf < i) lf = buf.indexOf('\n', i);
      if (cr !== -1 && cr < i) cr = buf.indexOf('\r', i);
      const lineEnd = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      if (lineEnd === -1) { i = buf.length; break; }
      const c = lineEnd === cr ? 13 : 10;
      // A \r at the end may be half of \r\n; only a blank line in a CR-only stream is known to be complete.
      if (c === 13 && lineEnd + 1 === buf.length && !(lineEnd === lineStart && prevLoneCR)) { i = lineEnd; break; }
      const crlf = c === 13 && lf === lineEnd + 1;
      i = lineEnd + (crlf ? 2 : 1);
      if (lineEnd === lineStart) {
        if (lineStart > frameStart) frames.push(parseFrame(buf.slice(frameStart, i)));
        frameStart = i;
      }
      prevLoneCR = c === 13 && !crlf;
      lineStart = i;
    }
    this.#buf = buf.slice(frameStart);
    this.#scan = i - frameStart;
    this.#lineStart = lineStart - frameStart;
    this.#prevLoneCR = prevLoneCR;
    return frames;
  }

  /** No text of a partial frame waits (bytes of a partial character may: see the decoder). */
  get idle(): boolean { return this.#buf === ''; }

  /** Bytes left after the last complete frame (a stream that ended mid-frame). */
  rest(): string {
    return this.#buf + this.#decoder.end();
  }
}

function parseFrame(raw: string): SseFrame {
  // Most frames are one `data:` line and the blank line (`data: {...}\n\n`): their data is a slice of the text.
  const end = raw.length - 2;
  if (raw.startsWith('data:') && raw.indexOf('\n') === end && raw.charCodeAt(end + 1) === 10 && raw.indexOf('\r') === -1) {
    return { event: undefined, data: raw.slice(raw.charCodeAt(5) === 32 ? 6 : 5, end), raw };
  }
  let event: string | undefined;
  let data: string | undefined;
  for (const line of raw.split(/\r\n|\r|\n/)) {
    if (line === '' || line.charCodeAt(0) === 58 /* : comment */) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'event') event = value;
  }
  return { event, data: data ?? '', raw };
}

/** Serialise one frame: optional event line, one data line per line of data, then the blank line. */
export function formatFrame(data: string, event?: string): string {
  const lines = data.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('');
  return `${event === undefined ? '' : `event: ${event}\n`}${lines}\n`;
}
