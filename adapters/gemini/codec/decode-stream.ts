// A Gemini upstream's answer → canonical events, chunk by chunk (SSE frames, or the elements of a whole answer): text
// and thought parts as deltas of one open block, each functionCall whole (start, its args, end at once) with an id
// minted when it has none, usage from the last usageMetadata, the finish when the upstream closes after a finishReason.
import type { BlockStart, CanonEvent, CodecContext, Signed, StopReason, StreamDecoder } from '../../../core/canonical.ts';
import type { SseFrame } from '../../../core/types.ts';
import type { Usage } from '../../../core/usage.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { restoreName, GEMINI_NAMES } from '../../shared/tool-names.ts';
import { geminiUsage } from '../usage.ts';
import { errorFromWire } from './errors.ts';
import { callIdsOf, idMinter, type IdMinter } from './ids.ts';
import { field, isObj, type Obj } from './read.ts';
import { FORMAT, SKIP_SIGNATURE, STOP_FROM_WIRE } from './tables.ts';

const ZERO: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

type Kind = 'text' | 'reasoning';

export class GeminiStreamDecoder implements StreamDecoder {
  #ctx: CodecContext;
  #minter: IdMinter;
  #started = false;
  #failed = false;
  #next = 0;
  #open: { index: number; kind: Kind; signed: boolean } | undefined;
  #calls = false;
  #stop: StopReason | undefined;
  #usage: Usage | undefined;

  constructor(ctx: CodecContext) {
    this.#ctx = ctx;
    this.#minter = idMinter(callIdsOf(ctx.request));
  }

  frame(frame: SseFrame): CanonEvent[] {
    const chunk = parseObject(frame.data);
    return chunk ? this.chunk(chunk) : [];
  }

  /** One GenerateContentResponse (or an `{error}` object). */
  chunk(chunk: Obj): CanonEvent[] {
    if (this.#failed) return [];
    const events: CanonEvent[] = [];
    if (isObj(chunk.error)) {
      this.#failed = true;
      const code = typeof chunk.error.code === 'number' ? chunk.error.code : undefined;
      return [{ type: 'error', error: errorFromWire(code, chunk.error, JSON.stringify(chunk.error)) }];
    }
    this.#usage = geminiUsage(chunk.usageMetadata) ?? this.#usage;
    if (!this.#started) {
      this.#started = true;
      events.push({
        type: 'start',
        id: typeof chunk.responseId === 'string' ? chunk.responseId : '',
        model: typeof chunk.modelVersion === 'string' ? chunk.modelVersion : this.#ctx.request.model,
        ...(this.#usage ? { usage: { input: this.#usage.input, cacheRead: this.#usage.cacheRead } } : {}),
      });
    }
    const candidates = Array.isArray(chunk.candidates) ? chunk.candidates.filter(isObj) : [];
    // Only the first answer: the canonical answer is one (candidateCount > 1 gives more, which have no place in it).
    const candidate = candidates.find((c) => (typeof c.index === 'number' ? c.index : 0) === 0);
    const content = isObj(candidate?.content) ? candidate.content : undefined;
    for (const part of Array.isArray(content?.parts) ? content.parts.filter(isObj) : []) events.push(...this.#part(part));
    const finish = typeof candidate?.finishReason === 'string' ? candidate.finishReason : undefined;
    if (finish) {
      events.push(...this.#close());
      this.#stop = STOP_FROM_WIRE[finish] ?? 'end';
    }
    // A blocked prompt: no candidates, a promptFeedback naming why (docs/wire-formats.md#gemini-response).
    const feedback = isObj(chunk.promptFeedback) ? chunk.promptFeedback : undefined;
    if (candidates.length === 0 && typeof feedback?.blockReason === 'string') this.#stop = 'content_filter';
    return events;
  }

  /** The answer is known to be whole (a generateContent body): it ended, with or without a finishReason. */
  settle(): void {
    this.#stop ??= 'end';
  }

  /** The upstream closed: the finish it implies when a finishReason came, else nothing (the answer was cut short). */
  end(): CanonEvent[] {
    if (this.#failed) return [];
    const events = this.#close();
    if (this.#stop === undefined) return events;
    const stop = this.#calls && this.#stop === 'end' ? 'tool_use' : this.#stop;
    events.push({ type: 'finish', stop, usage: this.#usage ?? { ...ZERO } });
    return events;
  }

  #part(part: Obj): CanonEvent[] {
    const raw = field(part, 'thoughtSignature');
    const signature: Signed | undefined = typeof raw === 'string' && raw !== '' && raw !== SKIP_SIGNATURE ? { format: FORMAT, value: raw } : undefined;
    if (typeof part.text === 'string') return this.#text(part.text, part.thought === true ? 'reasoning' : 'text', signature);
    const call = field(part, 'functionCall');
    if (isObj(call)) return this.#call(call, signature);
    const inline = field(part, 'inlineData');
    if (isObj(inline) && typeof inline.data === 'string') {
      const mediaType = String(field(inline, 'mimeType') ?? 'application/octet-stream');
      const source = { kind: 'base64' as const, mediaType, data: inline.data };
      return this.#whole(mediaType.startsWith('image/') ? { type: 'image', source } : { type: 'file', source });
    }
    // Code execution and other server-side parts: never asked for, so nothing a client could use.
    return [];
  }

  #text(text: string, kind: Kind, signature: Signed | undefined): CanonEvent[] {
    const events: CanonEvent[] = [];
    const open = this.#open;
    if (text === '' && !signature) return events;
    // A signature-only part (Gemini sends one after the text it signs) belongs to the open block of its kind.
    const joins = open?.kind === kind && !(signature && open.signed && text !== '');
    if (!joins) {
      if (text === '' && kind === 'text') return events;
      events.push(...this.#close(), this.#start(kind === 'text' ? { type: 'text' } : { type: 'reasoning' }));
      this.#open = { index: this.#next - 1, kind, signed: false };
    }
    const index = this.#open!.index;
    if (text !== '') events.push({ type: 'delta', index, text });
    if (signature) {
      events.push({ type: 'delta', index, signature });
      this.#open!.signed = true;
    }
    return events;
  }

  /** A functionCall arrives whole: its block starts, gets all its arguments and ends at once. */
  #call(call: Obj, signature: Signed | undefined): CanonEvent[] {
    this.#calls = true;
    const request = this.#ctx.request;
    const name = restoreName(typeof call.name === 'string' ? call.name : '', request, GEMINI_NAMES);
    const custom = request.tools.some((t) => t.kind === 'custom' && t.name === name);
    const args = isObj(call.args) ? call.args : {};
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : this.#minter.next();
    const closed = this.#close();
    const start = this.#start({ type: 'tool_call', id, name, ...(custom ? { custom: true } : {}), ...(signature ? { signature } : {}) });
    const index = this.#next - 1;
    const text = custom && typeof args.input === 'string' ? args.input : JSON.stringify(args);
    return [...closed, start, { type: 'delta', index, arguments: text }, { type: 'block_end', index }];
  }

  #whole(block: Extract<BlockStart, { type: 'whole' }>['block']): CanonEvent[] {
    const closed = this.#close();
    const start = this.#start({ type: 'whole', block });
    return [...closed, start, { type: 'block_end', index: this.#next - 1 }];
  }

  #start(block: BlockStart): CanonEvent {
    return { type: 'block_start', index: this.#next++, block };
  }

  #close(): CanonEvent[] {
    if (!this.#open) return [];
    const index = this.#open.index;
    this.#open = undefined;
    return [{ type: 'block_end', index }];
  }
}
