// Canonical events → a Gemini client's stream: `data: {GenerateContentResponse}` frames when it asked alt=sse, else one
// JSON array written element by element. Each chunk carries its new parts; the last content chunk is held back so the
// finishReason and the final usage ride on it, as Google sends them; a function call goes out whole when its block ends.
import type { CanonEvent, CanonError, CanonRequest, CodecContext, Signed, StreamEncoder } from '../../../core/canonical.ts';
import type { Usage } from '../../../core/usage.ts';
import { wrapSigned } from '../../shared/signatures.ts';
import { geminiFrame } from '../stream.ts';
import { encodeUsage } from './encode-usage.ts';
import { errorObject } from './errors.ts';
import { argsObject, partOf } from './parts.ts';
import type { Obj } from './read.ts';
import { FORMAT, STOP_TO_WIRE } from './tables.ts';

const ZERO: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

/** Whether the client reads SSE frames (alt=sse) rather than one JSON array; SSE unless its request said otherwise. */
export const wantsSse = (req: CanonRequest): boolean => req.extras[FORMAT]?.sse !== false;

interface Block { kind: 'text' | 'reasoning' | 'tool_call' | 'whole'; id?: string; name?: string; custom?: boolean; signature?: Signed; args: string }

export class GeminiStreamEncoder implements StreamEncoder {
  #ctx: CodecContext;
  #sse: boolean;
  #id = '';
  #usage: Usage = { ...ZERO };
  #blocks = new Map<number, Block>();
  /** The parts of the chunk held back, each with the block it came from. */
  #held: Array<{ index: number; part: Obj }> = [];
  #written = 0;
  #done = false;

  constructor(ctx: CodecContext) {
    this.#ctx = ctx;
    this.#sse = wantsSse(ctx.request);
  }

  event(e: CanonEvent): string {
    if (this.#done) return '';
    switch (e.type) {
      case 'start':
        this.#id = e.id;
        this.#usage = { ...this.#usage, ...e.usage };
        return '';
      case 'block_start': {
        const b = e.block;
        if (b.type === 'whole') {
          const part = partOf(b.block);
          return part ? this.#hold(e.index, part) : '';
        }
        this.#blocks.set(e.index, b.type === 'tool_call'
          ? { kind: 'tool_call', id: b.id, name: b.name, custom: b.custom, signature: b.signature, args: '' }
          : { kind: b.type, args: '' });
        return '';
      }
      case 'delta':
        return this.#delta(e);
      case 'block_end': {
        const block = this.#blocks.get(e.index);
        if (block?.kind !== 'tool_call') return '';
        const call = { functionCall: { id: block.id, name: block.name, args: argsObject(block.args, block.custom) } };
        return this.#hold(e.index, block.signature ? { ...call, thoughtSignature: wrapSigned(block.signature, FORMAT) } : call);
      }
      case 'usage':
        this.#usage = { ...this.#usage, ...e.usage };
        return '';
      case 'finish': {
        this.#done = true;
        const usage = e.usage ?? this.#usage;
        return this.#element(this.#chunk(this.#take(), STOP_TO_WIRE[e.stop], usage));
      }
      case 'error':
        this.#done = true;
        return this.#flush() + this.#failure(e.error);
    }
  }

  /** The stream ends: what is held goes out (without a finishReason if none came), and the array closes. */
  end(): string {
    const rest = this.#done ? '' : this.#flush();
    this.#done = true;
    if (this.#sse) return rest;
    return rest + (this.#written === 0 ? '[]' : '\r\n]');
  }

  #delta(e: Extract<CanonEvent, { type: 'delta' }>): string {
    const block = this.#blocks.get(e.index);
    if (!block) return '';
    if (block.kind === 'tool_call') {
      if (e.arguments !== undefined) block.args += e.arguments;
      if (e.signature) block.signature = e.signature;
      return '';
    }
    const thought = block.kind === 'reasoning' ? { thought: true } : {};
    let out = '';
    if (e.text !== undefined && e.text !== '') out += this.#hold(e.index, { text: e.text, ...thought });
    if (e.signature) {
      const signature = wrapSigned(e.signature, FORMAT);
      // A signature that follows its block's text rides on that text's part when it is still held, as Gemini sends it.
      const last = this.#held[this.#held.length - 1];
      if (last?.index === e.index && last.part.thoughtSignature === undefined) last.part.thoughtSignature = signature;
      else out += this.#hold(e.index, { text: '', ...thought, thoughtSignature: signature });
    }
    return out;
  }

  /** Holds a part back; what was held before goes out as a chunk of its own. */
  #hold(index: number, part: Obj): string {
    const out = this.#flush();
    this.#held = [{ index, part }];
    return out;
  }

  #flush(): string {
    const parts = this.#take();
    return parts.length > 0 ? this.#element(this.#chunk(parts)) : '';
  }

  #take(): Obj[] {
    const parts = this.#held.map((h) => h.part);
    this.#held = [];
    return parts;
  }

  #chunk(parts: Obj[], finishReason?: string, usage?: Usage): Obj {
    return {
      candidates: [{ ...(parts.length > 0 ? { content: { parts, role: 'model' } } : {}), ...(finishReason ? { finishReason } : {}), index: 0 }],
      ...(usage ? { usageMetadata: encodeUsage(usage) } : {}),
      modelVersion: this.#ctx.clientModel,
      responseId: this.#id,
    };
  }

  /** The stream's failure, as Google writes it on a 200 stream: an `{error}` frame or array element, then the end. */
  #failure(error: CanonError): string {
    return this.#element({ error: errorObject(error) });
  }

  #element(value: Obj): string {
    const json = JSON.stringify(value);
    if (this.#sse) return geminiFrame(json);
    return (this.#written++ === 0 ? '[' : '\r\n,\r\n') + json;
  }
}
