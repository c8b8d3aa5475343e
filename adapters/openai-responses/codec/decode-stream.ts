// An OpenAI upstream's Responses event stream → canonical events. Content may arrive only in a `.done` event or in
// output_item.done (some backends never send deltas), or only in the terminal response: each piece is emitted once,
// from wherever it first appears. response.completed / incomplete / done finish; response.failed and `error` fail.
import type { CanonEvent, CanonResponse, CodecContext, StreamDecoder } from '../../../core/canonical.ts';
import type { SseFrame } from '../../../core/types.ts';
import { openaiTokenUsage } from '../../shared/openai-usage.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { OPENAI_NAMES, restoreName } from '../../shared/tool-names.ts';
import { stopOf } from './decode-response.ts';
import { streamError } from './errors.ts';
import { reasoningBlockOf, reasoningText } from './reasoning.ts';
import { isObj, type Obj } from './read.ts';
import { FORMAT } from './tables.ts';

/** One canonical block being filled: whether any of its content went out, and whether it ended. */
interface Block { index: number; sent: boolean; ended: boolean }

/** One output item: its blocks (a message has one per content part), and reasoning's own bookkeeping. */
interface Item { type: string; blocks: Map<number, Block>; summaryIndex?: number; reasoningText: string }

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.done']);

export function decodeStream(ctx: CodecContext): StreamDecoder {
  return new ResponsesStreamDecoder(ctx);
}

class ResponsesStreamDecoder implements StreamDecoder {
  #ctx: CodecContext;
  #started = false;
  #finished = false;
  #next = 0;
  #items = new Map<number, Item>();
  #hasCall = false;
  #refused = false;
  #out: CanonEvent[] = [];

  constructor(ctx: CodecContext) {
    this.#ctx = ctx;
  }

  frame(f: SseFrame): CanonEvent[] {
    if (this.#finished) return [];
    const data = parseObject(f.data);
    if (!data) return [];
    this.#out = [];
    this.#handle(str(data.type) || str(f.event), data);
    return this.#out;
  }

  end(): CanonEvent[] {
    if (this.#finished) return [];
    this.#finished = true;
    return [{ type: 'error', error: { status: 502, kind: 'server', message: 'The upstream stream ended before its terminal event' } }];
  }

  #handle(type: string, e: Obj): void {
    const response = isObj(e.response) ? e.response : undefined;
    if (type === 'response.created' || type === 'response.in_progress' || type === 'response.queued') return this.#start(response);
    if (TERMINAL.has(type)) return this.#terminal(response ?? {});
    if (type === 'response.failed') return this.#fail(isObj(response?.error) ? response.error : {});
    if (type === 'error') return this.#fail(isObj(e.error) ? e.error : e);
    const at = typeof e.output_index === 'number' ? e.output_index : 0;
    const part = typeof e.content_index === 'number' ? e.content_index : 0;
    const item = isObj(e.item) ? e.item : undefined;
    switch (type) {
      case 'response.output_item.added':
        if (item && item.type !== 'message') this.#item(at, item);
        return;
      case 'response.output_item.done':
        if (item) this.#itemDone(at, item);
        return;
      case 'response.content_part.added':
        if (isObj(e.part) && e.part.type !== 'reasoning_text') this.#part(at, part);
        return;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (type === 'response.refusal.delta') this.#refused = true;
        return this.#text(this.#part(at, part), str(e.delta));
      case 'response.output_text.done':
      case 'response.refusal.done':
        if (type === 'response.refusal.done') this.#refused = true;
        return this.#once(this.#part(at, part), str(e.text ?? e.refusal));
      case 'response.content_part.done':
        if (isObj(e.part) && e.part.type !== 'reasoning_text') this.#once(this.#part(at, part), str(e.part.text ?? e.part.refusal));
        return;
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta':
        return this.#arguments(this.#toolBlock(at, type, e), str(e.delta));
      case 'response.function_call_arguments.done':
      case 'response.custom_tool_call_input.done': {
        const block = this.#toolBlock(at, type, e);
        if (!block.sent) this.#arguments(block, str(e.arguments ?? e.input));
        return;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_summary_text.done':
        return this.#summary(at, e, type.endsWith('.done'));
      case 'response.reasoning_text.delta': {
        this.#reasoning(at, { type: 'reasoning', id: e.item_id }).reasoningText += str(e.delta);
        return;
      }
    }
  }

  #start(response: Obj | undefined): void {
    if (this.#started) return;
    this.#started = true;
    this.#out.push({
      type: 'start', id: str(response?.id), model: str(response?.model),
      ...(typeof response?.created_at === 'number' ? { created: response.created_at } : {}),
    });
  }

  #open(at: number, type: string): Item {
    let item = this.#items.get(at);
    if (!item) this.#items.set(at, (item = { type, blocks: new Map(), reasoningText: '' }));
    return item;
  }

  #blockStart(item: Item, key: number, start: CanonEvent & { type: 'block_start' }): Block {
    this.#start(undefined);
    const block: Block = { index: this.#next++, sent: false, ended: false };
    item.blocks.set(key, block);
    this.#out.push({ ...start, index: block.index });
    return block;
  }

  /** A call or reasoning item starts its one block. */
  #item(at: number, raw: Obj): Block | undefined {
    const item = this.#open(at, str(raw.type));
    const existing = item.blocks.get(0);
    if (existing) return existing;
    if (raw.type === 'function_call' || raw.type === 'custom_tool_call') {
      this.#hasCall = true;
      const custom = raw.type === 'custom_tool_call';
      const name = restoreName(str(raw.name), this.#ctx.request, OPENAI_NAMES);
      const block = this.#blockStart(item, 0, { type: 'block_start', index: 0, block: { type: 'tool_call', id: str(raw.call_id), name, ...(custom ? { custom: true } : {}) } });
      const initial = str(custom ? raw.input : raw.arguments);
      if (initial !== '') this.#arguments(block, initial);
      return block;
    }
    if (raw.type === 'reasoning') {
      const id = str(raw.id);
      return this.#blockStart(item, 0, { type: 'block_start', index: 0, block: { type: 'reasoning', ...(id ? { id: { format: FORMAT, value: id } } : {}) } });
    }
    return undefined;
  }

  #part(at: number, key: number): Block {
    const item = this.#open(at, 'message');
    return item.blocks.get(key) ?? this.#blockStart(item, key, { type: 'block_start', index: 0, block: { type: 'text' } });
  }

  /** The call an arguments event belongs to; one whose item was never announced keeps the item id as its call id. */
  #toolBlock(at: number, type: string, e: Obj): Block {
    const custom = type.startsWith('response.custom_tool_call');
    return this.#item(at, { type: custom ? 'custom_tool_call' : 'function_call', call_id: e.item_id, name: e.name })!;
  }

  #reasoning(at: number, raw: Obj): Item {
    this.#item(at, raw);
    return this.#items.get(at)!;
  }

  #text(block: Block, text: string): void {
    if (text === '') return;
    block.sent = true;
    this.#out.push({ type: 'delta', index: block.index, text });
  }

  #once(block: Block, text: string): void {
    if (!block.sent) this.#text(block, text);
  }

  #arguments(block: Block, args: string): void {
    if (args === '') return;
    block.sent = true;
    this.#out.push({ type: 'delta', index: block.index, arguments: args });
  }

  /** Summary parts join with a blank line, as a whole reasoning item's text does (reasoningText). */
  #summary(at: number, e: Obj, done: boolean): void {
    const item = this.#reasoning(at, { type: 'reasoning', id: e.item_id });
    const block = item.blocks.get(0)!;
    const index = typeof e.summary_index === 'number' ? e.summary_index : 0;
    const text = str(done ? e.text : e.delta);
    if (done && item.summaryIndex === index) return; // its deltas came already
    if (text === '') return;
    this.#text(block, block.sent && item.summaryIndex !== index ? `\n\n${text}` : text);
    item.summaryIndex = index;
  }

  #itemDone(at: number, raw: Obj): void {
    const item = this.#open(at, str(raw.type));
    if (raw.type === 'message') {
      const parts = Array.isArray(raw.content) ? raw.content.filter(isObj) : [];
      parts.forEach((p, k) => {
        if (p.type === 'refusal') this.#refused = true;
        this.#once(this.#part(at, k), str(p.type === 'refusal' ? p.refusal : p.text));
      });
    } else {
      const block = this.#item(at, raw);
      if (!block) return;
      if (raw.type === 'reasoning') {
        if (!block.sent) this.#text(block, reasoningText(raw) || item.reasoningText);
        const { signature } = reasoningBlockOf(raw);
        if (signature) this.#out.push({ type: 'delta', index: block.index, signature });
      } else if (!block.sent) this.#arguments(block, str(raw.type === 'custom_tool_call' ? raw.input : raw.arguments));
    }
    this.#endItem(item);
  }

  #endItem(item: Item): void {
    for (const block of item.blocks.values()) {
      if (block.ended) continue;
      block.ended = true;
      this.#out.push({ type: 'block_end', index: block.index });
    }
  }

  #terminal(response: Obj): void {
    this.#start(response);
    // A backend that streamed no items at all still sends them in the final response.
    if (this.#items.size === 0 && Array.isArray(response.output)) response.output.filter(isObj).forEach((item, at) => this.#itemDone(at, item));
    for (const item of this.#items.values()) this.#endItem(item);
    let stop: CanonResponse['stop'];
    try {
      stop = stopOf(response, this.#hasCall, this.#refused);
    } catch {
      return this.#fail(isObj(response.error) ? response.error : { code: 'server_error', message: `The upstream response ended with status '${str(response.status)}'` });
    }
    this.#finished = true;
    const usage = openaiTokenUsage(response.usage);
    this.#out.push({ type: 'finish', stop, ...(usage ? { usage } : {}) });
  }

  #fail(error: Obj): void {
    this.#finished = true;
    this.#out.push({ type: 'error', error: streamError(error) });
  }
}
