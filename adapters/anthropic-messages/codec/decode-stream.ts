// An Anthropic upstream's event stream → canonical events: usage from message_start overwritten field by field by
// message_delta (cumulative, as the SDK does), blocks by their wire index, signatures tagged as Anthropic's own, a
// freeform tool's and the structured-output tool's input buffered to their end, `event: error` as the failure.
// State is per request: one reader per stream.
import type { CanonEvent, CodecContext, StopReason, StreamDecoder } from '../../../core/canonical.ts';
import type { SseFrame } from '../../../core/types.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { anthropicUsage, overwriteUsage } from '../usage.ts';
import { isObj, type Obj } from './check.ts';
import { errorFromWire } from './errors.ts';
import { answerCall, customText, outputText } from './structured.ts';
import { FORMAT, STOP_FROM_WIRE } from './tables.ts';

/** One wire block: its canonical index and how its deltas are read. */
interface WireBlock {
  index: number;
  kind: 'text' | 'thinking' | 'tool' | 'custom' | 'output' | 'whole';
  /** custom and output: the input JSON, read whole at the block's end. */
  json: string;
  /** tool: an input given in content_block_start, used only when no input_json_delta follows. */
  startInput?: Obj;
  wrapped?: boolean;
}

const ZERO = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
const signed = (value: unknown) => ({ format: FORMAT, value: String(value) });

export const decodeStream = (ctx: CodecContext): StreamDecoder => new MessagesStreamReader(ctx);

class MessagesStreamReader implements StreamDecoder {
  #ctx: CodecContext;
  #blocks = new Map<number, WireBlock>();
  #next = 0;
  #usage: Obj = {};
  #stop: StopReason = 'end';
  #stopSequence: string | undefined;
  /** The structured-output tool answered, and how many real calls there were: its tool_use stop is then a natural end. */
  #answered = false;
  #calls = 0;
  #over = false;

  constructor(ctx: CodecContext) {
    this.#ctx = ctx;
  }

  frame(f: SseFrame): CanonEvent[] {
    if (this.#over) return [];
    const event = parseObject(f.data);
    return event ? this.#event(event, String(event.type ?? f.event)) : [];
  }

  // An upstream that closed without message_stop failed: nothing is owed, the bridge ends the client's stream as failed.
  end(): CanonEvent[] {
    return [];
  }

  #event(event: Obj, name: string): CanonEvent[] {
    switch (name) {
      case 'message_start':
        return this.#start(isObj(event.message) ? event.message : {});
      case 'content_block_start':
        return isObj(event.content_block) ? this.#blockStart(Number(event.index), event.content_block) : [];
      case 'content_block_delta': {
        const block = this.#blocks.get(Number(event.index));
        return block && isObj(event.delta) ? blockDelta(block, event.delta) : [];
      }
      case 'content_block_stop': {
        const block = this.#blocks.get(Number(event.index));
        this.#blocks.delete(Number(event.index));
        return block ? this.#blockStop(block) : [];
      }
      case 'message_delta': {
        const delta = isObj(event.delta) ? event.delta : {};
        if (typeof delta.stop_reason === 'string') this.#stop = STOP_FROM_WIRE[delta.stop_reason] ?? 'end';
        if (typeof delta.stop_sequence === 'string') this.#stopSequence = delta.stop_sequence;
        if (isObj(event.usage)) overwriteUsage(this.#usage, event.usage);
        return [];
      }
      case 'message_stop':
        this.#over = true;
        return [this.#finish()];
      case 'error':
        this.#over = true;
        return [{ type: 'error', error: errorFromWire(undefined, event.error) }];
      default:
        // ping, and events newer than this codec.
        return [];
    }
  }

  #start(message: Obj): CanonEvent[] {
    if (isObj(message.usage)) overwriteUsage(this.#usage, message.usage);
    const usage = anthropicUsage(message.usage);
    return [{
      type: 'start', id: String(message.id ?? ''), model: String(message.model ?? this.#ctx.request.model),
      // message_start's output_tokens is a placeholder: only the input side is known yet.
      ...(usage ? { usage: { input: usage.input, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite } } : {}),
    }];
  }

  #open(wireIndex: number, kind: WireBlock['kind'], extra: Partial<WireBlock> = {}): number {
    const block: WireBlock = { index: this.#next++, kind, json: '', ...extra };
    this.#blocks.set(wireIndex, block);
    return block.index;
  }

  #blockStart(wireIndex: number, content: Obj): CanonEvent[] {
    switch (content.type) {
      case 'text': {
        const index = this.#open(wireIndex, 'text');
        return [{ type: 'block_start', index, block: { type: 'text' } }, ...(content.text ? [{ type: 'delta' as const, index, text: String(content.text) }] : [])];
      }
      case 'thinking': {
        const index = this.#open(wireIndex, 'thinking');
        return [
          { type: 'block_start', index, block: { type: 'reasoning' } },
          ...(content.thinking ? [{ type: 'delta' as const, index, text: String(content.thinking) }] : []),
          ...(content.signature ? [{ type: 'delta' as const, index, signature: signed(content.signature) }] : []),
        ];
      }
      case 'redacted_thinking': {
        const index = this.#open(wireIndex, 'whole');
        return [{ type: 'block_start', index, block: { type: 'whole', block: { type: 'reasoning', text: '', redacted: signed(content.data ?? '') } } }];
      }
      case 'tool_use':
        return this.#toolStart(wireIndex, content);
      default:
        // Server-tool blocks: the gateway never declares server tools, so they are no part of a translated answer.
        return [];
    }
  }

  #toolStart(wireIndex: number, content: Obj): CanonEvent[] {
    const call = answerCall(String(content.name ?? ''), this.#ctx.request);
    if (call.kind === 'output') {
      const index = this.#open(wireIndex, 'output', { wrapped: call.wrapped });
      return [{ type: 'block_start', index, block: { type: 'text' } }];
    }
    this.#calls++;
    const startInput = isObj(content.input) && Object.keys(content.input).length ? content.input : undefined;
    const index = this.#open(wireIndex, call.custom ? 'custom' : 'tool', { startInput });
    return [{ type: 'block_start', index, block: { type: 'tool_call', id: String(content.id ?? ''), name: call.name, ...(call.custom ? { custom: true } : {}) } }];
  }

  #blockStop(block: WireBlock): CanonEvent[] {
    const { index } = block;
    const input = () => parseObject(block.json) ?? {};
    const last: CanonEvent[] = [];
    if (block.kind === 'tool' && block.startInput) last.push({ type: 'delta', index, arguments: JSON.stringify(block.startInput) });
    if (block.kind === 'custom') last.push({ type: 'delta', index, arguments: customText(input()) });
    if (block.kind === 'output') {
      this.#answered = true;
      last.push({ type: 'delta', index, text: outputText(input(), block.wrapped === true) });
    }
    return [...last, { type: 'block_end', index }];
  }

  #finish(): CanonEvent {
    const stop = this.#answered && this.#stop === 'tool_use' && this.#calls === 0 ? 'end' : this.#stop;
    return {
      type: 'finish', stop,
      ...(this.#stopSequence === undefined ? {} : { stopSequence: this.#stopSequence }),
      usage: anthropicUsage(this.#usage) ?? { ...ZERO },
    };
  }
}

function blockDelta(block: WireBlock, delta: Obj): CanonEvent[] {
  const { index } = block;
  switch (delta.type) {
    case 'text_delta':
      return block.kind === 'text' && delta.text ? [{ type: 'delta', index, text: String(delta.text) }] : [];
    case 'thinking_delta':
      return block.kind === 'thinking' && delta.thinking ? [{ type: 'delta', index, text: String(delta.thinking) }] : [];
    case 'signature_delta':
      return block.kind === 'thinking' && delta.signature ? [{ type: 'delta', index, signature: signed(delta.signature) }] : [];
    case 'input_json_delta': {
      const fragment = typeof delta.partial_json === 'string' ? delta.partial_json : '';
      if (block.kind === 'tool') {
        if (fragment === '') return [];
        block.startInput = undefined;
        return [{ type: 'delta', index, arguments: fragment }];
      }
      if (block.kind === 'custom' || block.kind === 'output') block.json += fragment;
      return [];
    }
    default:
      // citations_delta: citations have no canonical form.
      return [];
  }
}
