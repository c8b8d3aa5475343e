// The process's stdout as its logger writes it. What one turn of the event loop logs (under load, the lines of every
// request that turn ended) goes out at the end of the turn in one write, from this thread. pino's own stdout
// (sonic-boom, asynchronous) writes each batch from libuv's thread pool instead: a pool thread woken and put back to
// sleep per write, which cost the bench's full chain ~6 µs of the pool's CPU per request on a 2-core VM.
// stdout as a pipe (a container's log) is non-blocking (node opens it so): when its reader falls behind, a write takes
// what the pipe has room for and the rest waits here, in order, tried again every RETRY_MS, so the event loop never
// waits for a log reader. What waits is bounded; past the bound a line is dropped and counted, and the count said once
// stdout takes lines again. At exit, what waits is written.
import { writeSync as fsWriteSync } from 'node:fs';
import type { DestinationStream } from 'pino';

/** After stdout refused a write (full pipe), the next try. */
const RETRY_MS = 10;
/** Bytes of lines kept for a stdout that does not take them; past this, lines are dropped (and counted). */
const MAX_WAITING = 16 * 1024 * 1024;

type WriteSync = (fd: number, data: Buffer) => number;

export class TurnWriter implements DestinationStream {
  readonly #fd: number;
  readonly #writeSync: WriteSync;
  /** Lines not yet written, in order: a partly written one's rest first (bytes), then text. */
  #rest: Buffer | undefined = undefined;
  #text = '';
  #scheduled = false;
  #retry: NodeJS.Timeout | undefined = undefined;
  #dropped = 0;
  #closed = false;

  /** `writeSync`: tests pass their own (refusals, partial writes); `exit`: write what waits when the process exits. */
  constructor(fd = 1, writeSync: WriteSync = fsWriteSync, exit = true) {
    this.#fd = fd;
    this.#writeSync = writeSync;
    if (exit) process.on('exit', () => this.flushSync());
  }

  /** Bytes waiting (approximately: the text's length in UTF-16 units). */
  get waiting(): number { return (this.#rest?.length ?? 0) + this.#text.length; }

  write(line: string): void {
    if (this.#closed) return;
    if (this.waiting + line.length > MAX_WAITING) { this.#dropped++; return; }
    this.#text += line;
    if (this.#scheduled || this.#retry) return;
    this.#scheduled = true;
    setImmediate(this.#turnEnd);
  }

  readonly #turnEnd = (): void => {
    this.#scheduled = false;
    this.#out();
  };

  readonly #again = (): void => {
    this.#retry = undefined;
    this.#out();
  };

  /** Writes what waits; true when all of it went. */
  #out(): boolean {
    if (this.#dropped > 0 && !this.#rest) {
      const n = this.#dropped;
      this.#dropped = 0;
      this.#text += `{"level":40,"time":"${new Date().toISOString()}","msg":"${n} log line${n === 1 ? '' : 's'} dropped: stdout did not take them"}\n`;
    }
    while (this.#rest || this.#text) {
      const bytes = this.#rest ?? Buffer.from(this.#text);
      if (!this.#rest) this.#text = '';
      let n: number;
      try {
        n = this.#writeSync(this.#fd, bytes);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        this.#rest = bytes;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EINTR') {
          this.#retry ??= setTimeout(this.#again, RETRY_MS);
          return false;
        }
        // stdout is gone (EPIPE, EBADF): nothing more can be written.
        this.#closed = true;
        this.#rest = undefined;
        this.#text = '';
        return false;
      }
      this.#rest = n < bytes.length ? bytes.subarray(n) : undefined;
    }
    return true;
  }

  /** Writes what waits now (the process is exiting): a full pipe still refuses, and what it refuses is lost. */
  flushSync(): void {
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    for (let tries = 0; tries < 100 && !this.#out(); tries++) {
      if (this.#closed) return;
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
  }
}
