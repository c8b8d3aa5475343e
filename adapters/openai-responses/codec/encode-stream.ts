// Canonical events → a Responses client's event stream: created and in_progress first, then one whole item at a time
// (added → part/summary added → deltas → done events → output_item.done), then completed or incomplete with the whole
// response. Every event is numbered from 0, and zero values (output_index: 0, arguments: "", content: []) are always
// written: Codex refuses events without them. Blocks that interleave (parallel calls) wait their turn, buffered.
import type { BlockStart, CanonBlock, CanonError, CanonEvent, CodecContext, StreamEncoder } from '../../../core/canonical.ts';
import type { Usage } from '../../../core/usage.ts';
import { callCarrier } from '../../shared/signatures.ts';
import { formatFrame } from '../../shared/sse.ts';
import { failedError } from './errors.ts';
import {
  encodeUsage, hasOutputItem, itemIdFor, outputItem, outputText, responseIdOf, responseObject, type ResponseState, wantsEncrypted,
} from './response-object.ts';
import type { Obj } from './read.ts';
import { STATUS_BY_STOP } from './tables.ts';

const ZERO: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

/** A block on its way: content gathers here until its item is the open one, then goes out as deltas. */
interface Pending {
  block: CanonBlock;
  ended: boolean;
  /** Set once output_item.added went out. */
  item?: { id: string; outputIndex: number };
  /** How much of the text or arguments went out already. */
  sent: number;
  summaryOpen: boolean;
}

export function encodeStream(ctx: CodecContext): StreamEncoder {
  return new ResponsesStreamEncoder(ctx);
}

class ResponsesStreamEncoder implements StreamEncoder {
  #ctx: CodecContext;
  #id: string;
  #encrypted: boolean;
  #sequence = 0;
  #createdAt = Math.floor(Date.now() / 1000);
  #started = false;
  #done = false;
  /** The response of response.completed or response.incomplete, once sent. */
  #final: Obj | undefined;
  /** Blocks not yet closed, in the order they started; the first is the open item. */
  #queue: Pending[] = [];
  #byIndex = new Map<number, Pending>();
  #output: Obj[] = [];
  #usage: Usage = { ...ZERO };

  constructor(ctx: CodecContext) {
    this.#ctx = ctx;
    this.#id = responseIdOf(ctx);
    this.#encrypted = wantsEncrypted(ctx);
  }

  event(e: CanonEvent): string {
    if (this.#done) return '';
    let out = this.#started || e.type === 'start' ? '' : this.#open();
    switch (e.type) {
      case 'start':
        if (e.created !== undefined) this.#createdAt = e.created;
        if (e.usage) this.#usage = { ...this.#usage, ...e.usage };
        if (!this.#started) out += this.#open();
        break;
      case 'block_start': {
        // A call's signature goes first, in a reasoning item of its own (withCallCarriers).
        if (this.#encrypted && e.block.type === 'tool_call' && e.block.signature) {
          this.#queue.push({ block: callCarrier(e.block.signature), ended: true, sent: 0, summaryOpen: false });
        }
        const pending: Pending = { block: blockOf(e.block), ended: e.block.type === 'whole', sent: 0, summaryOpen: false };
        this.#byIndex.set(e.index, pending);
        this.#queue.push(pending);
        out += this.#pump();
        break;
      }
      case 'delta': {
        const pending = this.#byIndex.get(e.index);
        if (!pending) break;
        const b = pending.block;
        if (e.text !== undefined && (b.type === 'text' || b.type === 'reasoning')) b.text += e.text;
        if (e.arguments !== undefined && b.type === 'tool_call') b.arguments += e.arguments;
        if (e.signature !== undefined && (b.type === 'reasoning' || b.type === 'text' || b.type === 'tool_call')) b.signature = e.signature;
        out += this.#pump();
        break;
      }
      case 'block_end': {
        const pending = this.#byIndex.get(e.index);
        if (pending) pending.ended = true;
        out += this.#pump();
        break;
      }
      case 'usage':
        this.#usage = { ...this.#usage, ...e.usage };
        break;
      case 'finish': {
        for (const pending of this.#queue) pending.ended = true; // a block the upstream never closed ends with the answer
        out += this.#pump();
        const { status, reason } = STATUS_BY_STOP[e.stop];
        out += this.#lifecycle(status === 'completed' ? 'response.completed' : 'response.incomplete', {
          status, usage: encodeUsage(e.usage ?? this.#usage), ...(reason ? { incompleteReason: reason } : {}),
        });
        this.#done = true;
        break;
      }
      case 'error':
        out += this.#fail(e.error);
        break;
    }
    return out;
  }

  end(): string {
    if (this.#done) return '';
    // Ending without a finish is a failure the client must see, never a clean end.
    return (this.#started ? '' : this.#open()) + this.#fail({ status: 502, kind: 'server', message: 'The upstream stream ended before the response was complete' });
  }

  #frame(type: string, fields: Obj): string {
    return formatFrame(JSON.stringify({ type, sequence_number: this.#sequence++, ...fields }), type);
  }

  final(): Obj | undefined { return this.#final; }

  #lifecycle(type: string, state: Omit<ResponseState, 'id' | 'createdAt' | 'output'>): string {
    const response = responseObject(this.#ctx, { id: this.#id, createdAt: this.#createdAt, output: this.#output, ...state });
    if (type === 'response.completed' || type === 'response.incomplete') this.#final = response;
    return this.#frame(type, { response });
  }

  #open(): string {
    this.#started = true;
    const state = { status: 'in_progress' as const, usage: null };
    return this.#lifecycle('response.created', state) + this.#lifecycle('response.in_progress', state);
  }

  /** The failed response keeps what had arrived: finished items, and the open one as it stood (incomplete). */
  #fail(error: CanonError): string {
    this.#done = true;
    for (const pending of this.#queue) {
      const item = pending.item && outputItem(pending.block, pending.item.id, this.#encrypted);
      if (item) this.#output.push({ ...item, status: 'incomplete' });
    }
    return this.#lifecycle('response.failed', { status: 'failed', usage: null, error: failedError(error) });
  }

  /** Sends what the open item has, closes it when its block ended, and moves on to the next one. */
  #pump(): string {
    let out = '';
    while (this.#queue.length > 0) {
      const pending = this.#queue[0];
      if (!pending.item) {
        if (!hasOutputItem(pending.block)) { this.#queue.shift(); continue; } // an image by URL: Responses has no item for it
        out += this.#added(pending);
      }
      out += this.#deltas(pending);
      if (!pending.ended) break;
      out += this.#close(pending);
      this.#queue.shift();
    }
    return out;
  }

  #added(pending: Pending): string {
    const outputIndex = this.#output.length; // every earlier item is closed: only the head of the queue opens
    const id = itemIdFor(pending.block, this.#id, outputIndex);
    pending.item = { id, outputIndex };
    const b = pending.block;
    const opening: Obj = b.type === 'text' ? { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] }
      : b.type === 'tool_call' ? (b.custom
        ? { id, type: 'custom_tool_call', status: 'in_progress', call_id: b.id, name: b.name, input: '' }
        : { id, type: 'function_call', status: 'in_progress', call_id: b.id, name: b.name, arguments: '' })
        : b.type === 'reasoning' ? { id, type: 'reasoning', summary: [] }
          : { ...outputItem(b, id, false), status: 'in_progress' };
    let out = this.#frame('response.output_item.added', { output_index: outputIndex, item: opening });
    if (b.type === 'text') out += this.#frame('response.content_part.added', { ...this.#at(pending), content_index: 0, part: outputText('') });
    return out;
  }

  #at(pending: Pending): Obj {
    return { item_id: pending.item!.id, output_index: pending.item!.outputIndex };
  }

  #deltas(pending: Pending): string {
    const b = pending.block;
    const whole = b.type === 'tool_call' ? b.arguments : b.type === 'text' || b.type === 'reasoning' ? b.text : '';
    const delta = whole.slice(pending.sent);
    if (delta === '') return '';
    pending.sent = whole.length;
    const at = this.#at(pending);
    if (b.type === 'text') return this.#frame('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
    if (b.type === 'tool_call') return this.#frame(b.custom ? 'response.custom_tool_call_input.delta' : 'response.function_call_arguments.delta', { ...at, delta });
    let out = '';
    if (!pending.summaryOpen) {
      pending.summaryOpen = true;
      out += this.#frame('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    return out + this.#frame('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta });
  }

  #close(pending: Pending): string {
    const b = pending.block;
    const at = this.#at(pending);
    let out = '';
    if (b.type === 'text') {
      out += this.#frame('response.output_text.done', { ...at, content_index: 0, text: b.text, logprobs: [] });
      out += this.#frame('response.content_part.done', { ...at, content_index: 0, part: outputText(b.text) });
    } else if (b.type === 'tool_call') {
      out += b.custom
        ? this.#frame('response.custom_tool_call_input.done', { ...at, input: b.arguments })
        : this.#frame('response.function_call_arguments.done', { ...at, name: b.name, arguments: b.arguments });
    } else if (b.type === 'reasoning' && pending.summaryOpen) {
      out += this.#frame('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: b.text });
      out += this.#frame('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: b.text } });
    }
    const item = outputItem(b, pending.item!.id, this.#encrypted)!;
    this.#output.push(item);
    return out + this.#frame('response.output_item.done', { output_index: pending.item!.outputIndex, item });
  }
}

/** The block a start event opens, empty until its deltas arrive (a whole block arrives complete). */
function blockOf(start: BlockStart): CanonBlock {
  switch (start.type) {
    case 'whole':
      return structuredClone(start.block);
    case 'text':
      return { type: 'text', text: '' };
    case 'reasoning':
      return { type: 'reasoning', text: '', ...(start.id ? { id: start.id } : {}) };
    case 'tool_call':
      return { type: 'tool_call', id: start.id, name: start.name, arguments: '', ...(start.custom ? { custom: true } : {}) };
  }
}
