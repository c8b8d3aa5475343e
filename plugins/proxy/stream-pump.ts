// The one stream pump: an upstream SSE stream read through one frame reader, each frame through the relay's transform
// (the format's scanner for a native pair, the two codecs for a translated one), with its keepalive, its ending, a cut
// stream's error event, and the read-on for usage once the client left.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { SseParser } from '../../adapters/shared/sse.ts';
import type { Ctx, FrameVerdict, Outcome, SseFrame, StreamedText } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import type { Opening } from './attempt.ts';
import { upstreamEnded, type Leaving } from './relay-ending.ts';
import type { UpstreamResponse } from './upstream-response.ts';
import { drainWanted, UsageDrain, type DrainBounds } from './usage-drain.ts';

/** What a relay does with each frame of its stream, and how it reads the stream's end. */
export interface FrameTransform {
  /** A frame relayed: undefined sends its bytes as they came, a string goes out instead ('' drops it). */
  frame(frame: SseFrame): string | undefined;
  /**
   * A frame of a held opening (attempt.ts), as frame() but already read by the upstream format's scanner with `verdict`:
   * a native relay's own scanner, which does not read it again. Also called once the client left (the text unused).
   */
  held(frame: SseFrame, verdict: FrameVerdict): string | undefined;
  /** A frame read after the client left: seen for its usage, never written. */
  read(frame: SseFrame): void;
  /** The upstream closed: what it still owes (a finish a codec infers from the close), as client text when `relayed`. */
  end(relayed: boolean): string;
  /** How the answer ended; undefined when the stream was cut before its terminal event. */
  ending(): Outcome | undefined;
  /** The client's own error event for a stream cut short ('' when the stream has one already). */
  cutShort(ctx: Ctx): string;
  /** The client stream's closing text, after any work the finished answer needs first (a kept conversation). */
  close(ctx: Ctx, outcome: Outcome | undefined): string | Promise<string>;
  usage(): Usage | undefined;
  streamed(): StreamedText | undefined;
}

/**
 * Relays an SSE stream frame by frame through `transform`, going on from a held `opening` (sent once the stream flows on);
 * what it returns is told when the client leaves first.
 */
export function pumpStream(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, keepaliveMs: number, transform: FrameTransform, bounds: DrainBounds | undefined, opening?: Opening): Leaving {
  return new StreamPump(ctx, upstream, status, headers, keepaliveMs, transform, bounds, opening);
}

function beat(pump: StreamPump): void { pump.beat(); }

/** The client response's end, with its last text when there is one (no empty write). */
function endWith(res: ServerResponse, text: string): void {
  if (text) res.end(text);
  else res.end();
}

class StreamPump implements Leaving {
  readonly #ctx: Ctx;
  readonly #upstream: UpstreamResponse;
  readonly #t: FrameTransform;
  readonly #bounds: DrainBounds | undefined;
  readonly #parser: SseParser;
  /** Read by the hold, not yet relayed: it goes out as the stream flows on (exchange.ts: once a pinned id is stored). */
  #opening: Opening | undefined;
  /** Bytes of the opening still to come back from the stream (attempt.ts puts them in front of it): read already. */
  #skip: number;
  readonly #keepalive: string | null;
  /** One timer for the stream, pushed back by every chunk (refresh: no new timer per chunk). */
  readonly #timer: NodeJS.Timeout | undefined;
  /** Nothing of an earlier chunk waits in the parser (no partial frame, no partial character). */
  #aligned = true;
  #finished = false;
  /** The client reads slower than the upstream writes: the upstream waits for its 'drain'. */
  #waiting = false;
  /** Set once the client left a stream that is read on for its usage: frames are only read. */
  #drain: UsageDrain | undefined = undefined;

  constructor(ctx: Ctx, upstream: UpstreamResponse, status: number, headers: OutgoingHttpHeaders, keepaliveMs: number, t: FrameTransform, bounds: DrainBounds | undefined, opening: Opening | undefined) {
    this.#ctx = ctx;
    this.#upstream = upstream;
    this.#t = t;
    this.#bounds = bounds;
    this.#parser = opening?.parser ?? new SseParser();
    this.#skip = opening?.bytes.length ?? 0;
    this.#opening = this.#skip > 0 ? opening : undefined;
    const { res } = ctx;
    // A stream that waited for an account already sent its 200 with the queue's keepalives. The headers go out at once
    // only when no bytes wait to follow them. The frames held for the first content do: the headers go in one write with
    // them as the stream flows on (exchange.ts: at once, or once a pinned id is stored), not in a write of their own.
    if (!res.headersSent) {
      res.writeHead(status, { ...headers, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      if (upstream.readableLength === 0) res.flushHeaders();
    }
    this.#keepalive = ctx.format.keepalive;
    this.#timer = this.#keepalive && keepaliveMs > 0 ? setTimeout(beat, keepaliveMs, this) : undefined;
    const finish = () => this.#finish();
    upstream.on('data', (chunk: Buffer) => this.#chunk(chunk));
    upstream.once('aborted', finish);
    upstream.once('error', finish);
    upstream.once('close', () => { upstreamEnded(ctx, upstream); finish(); });
  }

  beat(): void {
    this.#ctx.res.write(this.#keepalive!);
    this.#timer!.refresh();
  }

  #chunk(chunk: Buffer): void {
    if (this.#skip > 0) {
      this.#open();
      const read = Math.min(this.#skip, chunk.length);
      this.#skip -= read;
      if (read === chunk.length) return;
      chunk = chunk.subarray(read);
    }
    if (this.#drain) {
      if (this.#drain.take(chunk)) for (const frame of this.#parser.push(chunk)) this.#t.read(frame);
      return;
    }
    this.#relay(chunk, this.#parser.push(chunk), undefined);
  }

  /** The held opening: its frames went through the frame reader once, in the hold, and go on through the transform. */
  #open(): void {
    const o = this.#opening;
    if (o === undefined || this.#finished) return;
    this.#opening = undefined;
    if (!this.#drain) return this.#relay(o.bytes, o.frames, o.verdicts);
    if (this.#drain.take(o.bytes)) for (let i = 0; i < o.frames.length; i++) this.#t.held(o.frames[i], o.verdicts[i]);
  }

  /** One chunk's frames through the transform to the client: `verdicts` when they are a held opening's. */
  #relay(chunk: Buffer, frames: SseFrame[], verdicts: FrameVerdict[] | undefined): void {
    const t = this.#t;
    this.#timer?.refresh();
    const fresh = this.#aligned;
    let out = '';
    let changed = false;
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i];
      const text = verdicts === undefined ? t.frame(frame) : t.held(frame, verdicts[i]);
      if (text === undefined) out += frame.raw;
      else {
        changed = true;
        out += text;
      }
    }
    // A chunk that ends at a frame's end on an ASCII byte leaves nothing waiting (a UTF-8 character never ends early).
    const aligned = this.#aligned = this.#parser.idle && chunk[chunk.length - 1] < 0x80;
    // Frames that passed as they came, made of exactly this chunk's bytes: the chunk itself goes out, not re-encoded.
    if (!out) return;
    const res = this.#ctx.res;
    if (!(fresh && aligned && !changed ? res.write(chunk) : res.write(out))) this.#wait();
  }

  /** A slow client holds the upstream back (as pipe() does) instead of its answer piling up in the gateway's memory. */
  #wait(): void {
    if (this.#waiting) return;
    this.#waiting = true;
    this.#upstream.pause();
    this.#ctx.res.once('drain', () => this.#goOn());
  }

  #goOn(): void {
    if (!this.#waiting) return;
    this.#waiting = false;
    this.#upstream.resume();
  }

  /** What the stream showed is copied onto ctx, as metering may settle before the upstream's own end. */
  #observe(): void {
    this.#finished = true;
    clearTimeout(this.#timer);
    this.#ctx.usage = this.#t.usage();
    this.#ctx.streamed = this.#t.streamed();
  }

  #finish(): void {
    if (this.#finished) return;
    // Cut before it flowed on: what was held still goes first.
    this.#open();
    const { res } = this.#ctx;
    const t = this.#t;
    let tail = t.end(this.#drain === undefined);
    if (this.#drain) {
      this.#observe();
      return this.#drain.end();
    }
    const ending = t.ending();
    if (ending) this.#ctx.end(ending);
    else if (!res.writableEnded && !res.destroyed) {
      // Never let a cut stream look like a clean finish: end it with the client format's own error event.
      this.#ctx.end('missing-terminal');
      tail += t.cutShort(this.#ctx);
    }
    this.#observe();
    if (res.writableEnded || res.destroyed) return;
    const last = t.close(this.#ctx, ending);
    if (typeof last === 'string') endWith(res, tail + last);
    else void last.then((text) => endWith(res, tail + text));
  }

  // The client left: what was seen so far is what gets billed, and the ending stays 'disconnected'; a stream that has not
  // named its prompt's tokens is read on (bounded) for the usage its end reports.
  leave(ended: () => void): boolean {
    if (this.#finished) return false;
    if (!drainWanted(this.#t.usage(), this.#bounds)) { this.#observe(); return false; }
    clearTimeout(this.#timer);
    this.#drain = new UsageDrain(this.#upstream, this.#bounds, ended);
    // No 'drain' comes from a client that left: the read on goes on at once.
    this.#goOn();
    return true;
  }
}
