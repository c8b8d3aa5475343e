// Reading on, unrelayed, an upstream stream whose client left before it reported the prompt's tokens, so the usage its end
// reports is billed instead of an estimate: bounded in time and bytes, and cut when the gateway shuts down.
import type { Usage } from '../../core/usage.ts';
import type { UpstreamResponse } from './upstream-response.ts';

/** How long and how far a stream is read after its client left (proxy `usage_drain_ms`, `usage_drain_bytes`). */
export interface DrainBounds { ms: number; bytes: number; signal?: AbortSignal }

/** A stream its client left is read on only while its prompt is unreported (formats that report it first stop at once). */
export const drainWanted = (usage: Usage | undefined, b: DrainBounds | undefined): b is DrainBounds =>
  b !== undefined && b.ms > 0 && b.bytes > 0 && !(usage !== undefined && usage.input > 0) && b.signal?.aborted !== true;

/** One stream read on after its client left; the relay calls end() when the upstream closes, which the bounds force. */
export class UsageDrain {
  readonly #upstream: UpstreamResponse;
  readonly #limit: number;
  readonly #signal: AbortSignal | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #ended: () => void;
  readonly #cut = () => { this.#upstream.destroy(); };
  #bytes = 0;

  constructor(upstream: UpstreamResponse, b: DrainBounds, ended: () => void) {
    this.#upstream = upstream;
    this.#limit = b.bytes;
    this.#signal = b.signal;
    this.#ended = ended;
    this.#timer = setTimeout(this.#cut, b.ms);
    this.#signal?.addEventListener('abort', this.#cut, { once: true });
  }

  /** Counts a chunk read since the client left: false, and the upstream cut, once they pass the byte bound. */
  take(chunk: Buffer): boolean {
    this.#bytes += chunk.length;
    if (this.#bytes <= this.#limit) return true;
    this.#cut();
    return false;
  }

  /** The upstream closed (at its end or cut): what was read is on the context, and the relay may resolve. */
  end(): void {
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener('abort', this.#cut);
    this.#ended();
  }
}
