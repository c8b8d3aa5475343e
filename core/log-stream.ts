// The process's stdout as its logger writes it. What one turn of the event loop logs (under load, the lines of every
// request that turn ended) goes out at the end of the turn in one write, from this thread. pino's own stdout
// (sonic-boom, asynchronous) writes each batch from libuv's thread pool instead, waking a pool thread per write
// (docs/performance.md).
// stdout as a pipe (a container's log) is non-blocking (node opens it so): when its reader falls behind, a write takes
// what the pipe has room for and the rest waits here, in order, tried again every RETRY_MS, so the event loop never
// waits for a log reader. What waits is bounded; past the bound a line is dropped and counted, and the count said once
// stdout takes lines again. At exit, what waits is written.
import { fstatSync, writeSync as fsWriteSync } from 'node:fs';
import type { DestinationStream } from 'pino';

/** After stdout refused a write (full pipe), the next try. */
const RETRY_MS = 10;
/** Bytes of lines kept for a stdout that does not take them; past this, lines are dropped (and counted). */
const MAX_WAITING = 16 * 1024 * 1024;
/** A write to a pipe of at most this many bytes is never interleaved with another process's (POSIX PIPE_BUF, Linux's). */
const PIPE_BUF = 4096;

type WriteSync = (fd: number, data: Buffer) => number;

export class TurnWriter implements DestinationStream {
  readonly #fd: number;
  readonly #writeSync: WriteSync;
  /** stdout is a pipe: whole lines, at most PIPE_BUF bytes a write (a cluster's workers share it). */
  readonly #atomic: boolean;
  /** Lines not yet written, in order: bytes taken for writing (a write may take part of them), then text. */
  #rest: Buffer | undefined = undefined;
  #text = '';
  #scheduled = false;
  #retry: NodeJS.Timeout | undefined = undefined;
  #dropped = 0;
  #closed = false;

  /**
   * `writeSync`: tests pass their own (refusals, partial writes); `exit`: write what waits when the process exits;
   * `atomic`: whether writes keep to whole lines of at most PIPE_BUF bytes (default: when `fd` is a pipe).
   */
  constructor(fd = 1, opts: { writeSync?: WriteSync; exit?: boolean; atomic?: boolean } = {}) {
    this.#fd = fd;
    this.#writeSync = opts.writeSync ?? fsWriteSync;
    this.#atomic = opts.atomic ?? isPipe(fd);
    if (opts.exit ?? true) process.on('exit', () => this.flushSync());
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
      this.#text += `{"level":"warn","time":"${new Date().toISOString()}","msg":"${n} log line${n === 1 ? '' : 's'} dropped: stdout did not take them"}\n`;
    }
    while (this.#rest || this.#text) {
      if (!this.#rest) {
        this.#rest = Buffer.from(this.#text);
        this.#text = '';
      }
      const bytes = this.#rest;
      // Several processes writing one pipe (a cluster's workers) never cut into each other's lines: a write of at most
      // PIPE_BUF bytes lands whole (on a full non-blocking pipe, all or nothing). A longer line goes alone.
      let size = bytes.length;
      if (this.#atomic && size > PIPE_BUF) {
        const end = bytes.lastIndexOf(10, PIPE_BUF - 1);
        size = end >= 0 ? end + 1 : bytes.indexOf(10) + 1 || size;
      }
      let n: number;
      try {
        n = this.#writeSync(this.#fd, size === bytes.length ? bytes : bytes.subarray(0, size));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
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

function isPipe(fd: number): boolean {
  try { return fstatSync(fd).isFIFO(); } catch { return false; }
}
