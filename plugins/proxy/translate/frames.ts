// A translated stream's frames for the pump (stream-pump.ts): upstream frames decoded by the upstream's codec into
// canonical events, written in the client's own frames by the client's codec; usage is the upstream's own numbers.
import type { CanonError, CanonEvent, CanonResponse, Codec, CodecContext, StreamDecoder, StreamEncoder, ToolCallBlock } from '../../../core/canonical.ts';
import { collectEvents } from '../../../adapters/shared/collect-events.ts';
import type { Ctx, Outcome, SseFrame, StreamedText } from '../../../core/types.ts';
import type { Usage } from '../../../core/usage.ts';
import type { FrameTransform } from '../stream-pump.ts';

/** The two codecs of a translated exchange, what they share, and where a finished answer is kept (Codec.state). */
export interface Codecs {
  client: Codec;
  upstream: Codec;
  cctx: CodecContext;
  /** Keeps the answer (canonical, and as the client saw it) before the client can name it in its next request. */
  keep?: (res: CanonResponse, answer: unknown) => Promise<void>;
  /** Keeps the signatures of the answer's calls (signatures.ts) before the client can replay them. */
  signed?: (calls: ToolCallBlock[]) => Promise<void>;
}

/** What a stream showed of its answer so far: the usage, the text relayed, and how it ended. */
class Observed {
  #usage: Partial<Usage> | undefined;
  chars = 0;
  finish: (CanonEvent & { type: 'finish' }) | undefined;
  error: CanonError | undefined;

  see(e: CanonEvent): void {
    switch (e.type) {
      case 'start': if (e.usage) this.#usage = { ...this.#usage, ...e.usage }; break;
      case 'usage': this.#usage = { ...this.#usage, ...e.usage }; break;
      case 'delta': this.chars += (e.text?.length ?? 0) + (e.arguments?.length ?? 0); break;
      case 'finish': this.finish = e; if (e.usage) this.#usage = { ...e.usage }; break;
      case 'error': this.error = e.error; break;
    }
  }

  usage(): Usage | undefined {
    const u = this.#usage;
    if (!u) return undefined;
    return { input: u.input ?? 0, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0, output: u.output ?? 0, reasoning: u.reasoning ?? 0, ...(u.cacheWrite1h ? { cacheWrite1h: u.cacheWrite1h } : {}) };
  }
}

/** The event that ends a stream the upstream cut before its finish, in the client's format. */
const cut = (): CanonEvent => ({ type: 'error', error: { status: 502, kind: 'server', message: 'The upstream stream ended before it completed' } });

export class CodecFrames implements FrameTransform {
  readonly #c: Codecs;
  readonly #decoder: StreamDecoder;
  readonly #encoder: StreamEncoder;
  readonly #seen = new Observed();
  /** Kept answers are folded from the events once whole. */
  readonly #events: CanonEvent[] | undefined;
  /** An error the upstream sent in its stream fails the answer; one only its end brings is the stream's cut. */
  #failed = false;
  /** Signed calls of the answer, by block index, for Codecs.signed. */
  readonly #signedCalls = new Map<number, ToolCallBlock>();

  constructor(c: Codecs) {
    this.#c = c;
    this.#decoder = c.upstream.decodeStream(c.cctx);
    this.#encoder = c.client.encodeStream(c.cctx);
    this.#events = c.keep ? [] : undefined;
  }

  frame(frame: SseFrame): string { return this.#encode(this.#decoder.frame(frame)); }

  // The upstream format's scanner read it only to hold the stream: the codec reads it now.
  held(frame: SseFrame): string { return this.frame(frame); }

  read(frame: SseFrame): void { for (const e of this.#decoder.frame(frame)) this.#seen.see(e); }

  end(relayed: boolean): string {
    this.#failed = this.#seen.error !== undefined;
    const owed = this.#decoder.end();
    if (relayed) return this.#encode(owed);
    for (const e of owed) this.#seen.see(e);
    return '';
  }

  ending(): Outcome | undefined {
    const seen = this.#seen;
    if (this.#failed) return 'failed';
    if (!seen.finish || seen.error) return undefined;
    return seen.finish.stop === 'max_tokens' ? 'incomplete' : 'completed';
  }

  cutShort(): string { return this.#seen.error ? '' : this.#encode([cut()]); }

  close(ctx: Ctx, outcome: Outcome | undefined): string | Promise<string> {
    const { signed } = this.#c;
    // The stream's last bytes wait for the signatures: the client replays the calls once it has them.
    if (signed && this.#signedCalls.size > 0) return signed([...this.#signedCalls.values()]).then(() => this.#close(ctx, outcome));
    return this.#close(ctx, outcome);
  }

  #close(ctx: Ctx, outcome: Outcome | undefined): string | Promise<string> {
    const { keep, client, cctx } = this.#c;
    const encoder = this.#encoder;
    if (!keep || !this.#events || (outcome !== 'completed' && outcome !== 'incomplete')) return encoder.end();
    const folded = collectEvents(this.#events);
    // What the stream's last event said, where it said the whole answer (its times included), else encoded.
    const answer = encoder.final?.() ?? client.encodeResponse(folded, cctx);
    return keep(folded, answer)
      .catch((err) => ctx.log.warn({ err, req_id: ctx.id }, 'conversation not kept'))
      .then(() => encoder.end());
  }

  usage(): Usage | undefined { return this.#seen.usage(); }
  streamed(): StreamedText { return { chars: this.#seen.chars, outputFinal: this.#seen.finish?.usage !== undefined }; }

  #encode(batch: CanonEvent[]): string {
    let out = '';
    for (const e of batch) {
      this.#seen.see(e);
      this.#events?.push(e);
      if (this.#c.signed) this.#signing(e);
      out += this.#encoder.event(e);
    }
    return out;
  }

  #signing(e: CanonEvent): void {
    if (e.type === 'block_start' && e.block.type === 'tool_call' && e.block.signature) {
      const { id, name, signature } = e.block;
      this.#signedCalls.set(e.index, { type: 'tool_call', id, name, arguments: '', signature });
    } else if (e.type === 'delta' && e.arguments !== undefined) {
      const call = this.#signedCalls.get(e.index);
      if (call) call.arguments += e.arguments;
    }
  }
}
