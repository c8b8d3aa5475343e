// Canonical events → an Anthropic Messages event stream for a client: message_start, one content block open at a time
// (blocks whose deltas interleave wait, buffered, until the open one ends), message_delta with the cumulative usage,
// message_stop; a failure is `event: error`. Tool arguments always travel as input_json_delta (Claude Code reads nothing
// else). State is per request: one writer per stream.
import type { BlockStart, CanonBlock, CanonEvent, CodecContext, StreamEncoder } from '../../../core/canonical.ts';
import type { Usage } from '../../../core/usage.ts';
import { callCarrier, wrapSigned } from '../../shared/signatures.ts';
import { formatFrame } from '../../shared/sse.ts';
import type { Obj } from './check.ts';
import { toolInput } from './encode-blocks.ts';
import { wireUsage } from './encode-usage.ts';
import { errorObject } from './errors.ts';
import { messageId } from './response.ts';
import { FORMAT, STOP_TO_WIRE } from './tables.ts';

type Delta = CanonEvent & { type: 'delta' };

/** A canonical block from its start to its end, with what arrived before it could be opened on the wire. */
interface Pending { start: BlockStart; waiting: Delta[]; ended: boolean }

/** The block open on the wire: its canonical and wire index, and how its deltas are written. */
interface Open { index: number; wire: number; kind: 'text' | 'thinking' | 'tool_use' | 'custom'; customOpened: boolean }

const frame = (event: Obj): string => formatFrame(JSON.stringify(event), String(event.type));
const blockDelta = (wire: number, delta: Obj): string => frame({ type: 'content_block_delta', index: wire, delta });

export const encodeStream = (ctx: CodecContext): StreamEncoder => new MessagesStreamWriter(ctx);

class MessagesStreamWriter implements StreamEncoder {
  #ctx: CodecContext;
  #pending = new Map<number, Pending>();
  /** Canonical indices waiting to be opened, in the order they started. */
  #queue: number[] = [];
  #open: Open | undefined;
  #nextWire = 0;
  #started = false;
  #over = false;
  #usage: Partial<Usage> = {};

  constructor(ctx: CodecContext) {
    this.#ctx = ctx;
  }

  event(event: CanonEvent): string {
    if (this.#over) return '';
    switch (event.type) {
      case 'start':
        this.#usage = { ...this.#usage, ...event.usage };
        return this.#started ? '' : this.#messageStart(event.id);
      case 'block_start':
        this.#pending.set(event.index, { start: event.block, waiting: [], ended: event.block.type === 'whole' });
        this.#queue.push(event.index);
        return this.#ensureStarted() + this.#drain();
      case 'delta': {
        if (this.#open?.index === event.index) return this.#delta(event);
        this.#pending.get(event.index)?.waiting.push(event);
        return '';
      }
      case 'block_end': {
        const block = this.#pending.get(event.index);
        if (!block) return '';
        block.ended = true;
        return this.#drain();
      }
      case 'usage':
        this.#usage = { ...this.#usage, ...event.usage };
        return '';
      case 'finish':
        this.#over = true;
        return this.#finish(event);
      case 'error':
        this.#over = true;
        return frame({ type: 'error', error: errorObject(event.error) });
    }
  }

  // Nothing is owed: a stream ends with message_stop or an error event, both written as they come.
  end(): string {
    return '';
  }

  #messageStart(id: string): string {
    this.#started = true;
    return frame({
      type: 'message_start',
      message: {
        id: messageId(id), type: 'message', role: 'assistant', model: this.#ctx.clientModel, content: [],
        stop_reason: null, stop_sequence: null,
        // output_tokens is a placeholder here, as Anthropic sends it; message_delta carries the count.
        usage: { ...wireUsage(this.#usage, true), output_tokens: 1 },
      },
    });
  }

  #ensureStarted(): string {
    return this.#started ? '' : this.#messageStart('');
  }

  /** Opens waiting blocks in the order they started, writes what they buffered, and closes those already ended. */
  #drain(): string {
    let out = '';
    for (;;) {
      if (this.#open) {
        if (!this.#pending.get(this.#open.index)?.ended) return out;
        out += this.#closeOpen();
      }
      const index = this.#queue.shift();
      if (index === undefined) return out;
      const block = this.#pending.get(index)!;
      if (block.start.type === 'whole') {
        out += this.#whole(block.start.block);
        this.#pending.delete(index);
        continue;
      }
      // A call's signature goes first, in a thinking block of its own (withCallCarriers).
      if (block.start.type === 'tool_call' && block.start.signature) out += this.#whole(callCarrier(block.start.signature));
      const { kind, contentBlock } = openingOf(block.start);
      this.#open = { index, wire: this.#nextWire++, kind, customOpened: false };
      out += frame({ type: 'content_block_start', index: this.#open.wire, content_block: contentBlock });
      for (const delta of block.waiting) out += this.#delta(delta);
      block.waiting = [];
    }
  }

  #delta(delta: Delta): string {
    const open = this.#open!;
    switch (open.kind) {
      case 'text':
        return delta.text ? blockDelta(open.wire, { type: 'text_delta', text: delta.text }) : '';
      case 'thinking':
        return (delta.text ? blockDelta(open.wire, { type: 'thinking_delta', thinking: delta.text }) : '')
          + (delta.signature ? blockDelta(open.wire, { type: 'signature_delta', signature: wrapSigned(delta.signature, FORMAT) }) : '');
      case 'tool_use':
        return delta.arguments ? blockDelta(open.wire, { type: 'input_json_delta', partial_json: delta.arguments }) : '';
      case 'custom': {
        // A freeform tool's raw text, streamed as the `{input}` object the client's tool takes (tools.ts CUSTOM_INPUT_SCHEMA).
        if (!delta.arguments) return '';
        const head = open.customOpened ? '' : '{"input":"';
        open.customOpened = true;
        return blockDelta(open.wire, { type: 'input_json_delta', partial_json: head + JSON.stringify(delta.arguments).slice(1, -1) });
      }
    }
  }

  #closeOpen(): string {
    const open = this.#open!;
    const tail = open.kind !== 'custom' ? '' : blockDelta(open.wire, { type: 'input_json_delta', partial_json: open.customOpened ? '"}' : '{"input":""}' });
    this.#pending.delete(open.index);
    this.#open = undefined;
    return tail + frame({ type: 'content_block_stop', index: open.wire });
  }

  /** A block that arrives whole is written at once, start to stop; what has no place in a Message is skipped. */
  #whole(block: CanonBlock): string {
    const pieces = wholePieces(block);
    if (!pieces) return '';
    const wire = this.#nextWire++;
    return frame({ type: 'content_block_start', index: wire, content_block: pieces.start })
      + pieces.deltas.map((delta) => blockDelta(wire, delta)).join('')
      + frame({ type: 'content_block_stop', index: wire });
  }

  #finish(event: CanonEvent & { type: 'finish' }): string {
    for (const block of this.#pending.values()) block.ended = true;
    const delta = { stop_reason: STOP_TO_WIRE[event.stop], stop_sequence: event.stopSequence ?? null };
    return this.#ensureStarted() + this.#drain()
      + frame({ type: 'message_delta', delta, usage: wireUsage(event.usage ?? this.#usage, false) })
      + frame({ type: 'message_stop' });
  }
}

function openingOf(start: Exclude<BlockStart, { type: 'whole' }>): { kind: Open['kind']; contentBlock: Obj } {
  switch (start.type) {
    case 'text':
      return { kind: 'text', contentBlock: { type: 'text', text: '' } };
    case 'reasoning':
      return { kind: 'thinking', contentBlock: { type: 'thinking', thinking: '', signature: '' } };
    case 'tool_call':
      // input is always {} at the start: the arguments follow as input_json_delta.
      return { kind: start.custom ? 'custom' : 'tool_use', contentBlock: { type: 'tool_use', id: start.id, name: start.name, input: {} } };
  }
}

/** A whole block as a content_block_start and its deltas; undefined for images and files (an answer has no place for them). */
function wholePieces(block: CanonBlock): { start: Obj; deltas: Obj[] } | undefined {
  switch (block.type) {
    case 'text':
      return { start: { type: 'text', text: '' }, deltas: block.text ? [{ type: 'text_delta', text: block.text }] : [] };
    case 'reasoning':
      if (block.redacted) return { start: { type: 'redacted_thinking', data: wrapSigned(block.redacted, FORMAT) }, deltas: [] };
      return {
        start: { type: 'thinking', thinking: '', signature: '' },
        deltas: [
          ...(block.text ? [{ type: 'thinking_delta', thinking: block.text }] : []),
          ...(block.signature ? [{ type: 'signature_delta', signature: wrapSigned(block.signature, FORMAT) }] : []),
        ],
      };
    case 'tool_call':
      return {
        start: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        deltas: [{ type: 'input_json_delta', partial_json: JSON.stringify(toolInput(block)) }],
      };
    default:
      return undefined;
  }
}
