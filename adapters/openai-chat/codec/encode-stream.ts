// Canonical events → the chat.completion.chunk stream a chat client reads, as OpenAI sends it: the role first, content,
// reasoning_content and tool-call deltas (keyed by `index`, counting tool calls only), the finish chunk, the usage
// chunk (choices: []) only when the client asked include_usage, then [DONE]. A failure is `data: {"error":…}` and no
// [DONE]. One encoder per request: all its state is its own.
import type { BlockStart, CanonEvent, CodecContext, StreamEncoder } from '../../../core/canonical.ts';
import type { Usage } from '../../../core/usage.ts';
import { formatFrame } from '../../shared/sse.ts';
import { chatUsageObject } from '../usage.ts';
import type { Obj } from './checks.ts';
import { completionId, finishReason, nowSeconds } from './encode-response.ts';
import { chatErrorObject } from './errors.ts';
import { FORMAT } from './tables.ts';

const DONE = 'data: [DONE]\n\n';

interface ToolBlock { kind: 'tool'; id: string; name: string; custom: boolean; args: string; ended: boolean; sent?: number }
type Block = { kind: 'text' } | { kind: 'reasoning' } | ToolBlock | { kind: 'none' };

export function encodeStream(ctx: CodecContext): StreamEncoder {
  const includeUsage = ctx.request.extras[FORMAT]?.includeUsage === true;
  const blocks = new Map<number, Block>();
  // Chat clients take a tool call as complete once the next one starts (the openai SDK parses its arguments then), so
  // calls go out one at a time: one being sent, the others held with their arguments until it ends.
  let active: ToolBlock | undefined;
  const waiting: ToolBlock[] = [];
  let id = 'chatcmpl-gateway';
  let created = nowSeconds();
  let started = false;
  let ended = false;
  let finished = false;
  let toolCalls = 0;
  let usage: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

  // Every chunk carries usage: null when the client asked for the usage chunk, as OpenAI's do; else no usage key.
  const chunk = (choices: Obj[], extra: Obj = {}) => formatFrame(JSON.stringify({
    id, object: 'chat.completion.chunk', created, model: ctx.clientModel, choices, ...(includeUsage ? { usage: null } : {}), ...extra,
  }));
  const delta = (d: Obj, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const open = (): string => {
    if (started) return '';
    started = true;
    return delta({ role: 'assistant', content: '' });
  };

  /** A tool call's first fragment (id, type, name, empty arguments), then what it had gathered while it waited. */
  function send(tool: ToolBlock): string {
    const index = tool.sent = toolCalls++;
    const first = tool.custom
      ? { index, id: tool.id, type: 'custom', custom: { name: tool.name, input: '' } }
      : { index, id: tool.id, type: 'function', function: { name: tool.name, arguments: '' } };
    return delta({ tool_calls: [first] }) + fragment(tool, tool.args);
  }

  function fragment(tool: ToolBlock, args: string): string {
    if (args === '' || tool.sent === undefined) return '';
    const index = tool.sent;
    return delta({ tool_calls: [tool.custom ? { index, custom: { input: args } } : { index, function: { arguments: args } }] });
  }

  /** The active call is done (or the answer is): the waiting calls go out in order, until one still streaming. */
  function advance(all: boolean): string {
    let out = '';
    while (!active && waiting.length > 0) {
      const next = waiting.shift()!;
      out += send(next);
      if (!next.ended && !all) active = next;
    }
    return out;
  }

  function toolStart(index: number, start: { id: string; name: string; custom?: boolean }): string {
    const tool: ToolBlock = { kind: 'tool', id: start.id, name: start.name, custom: start.custom === true, args: '', ended: false };
    blocks.set(index, tool);
    waiting.push(tool);
    return advance(false);
  }

  function blockStart(index: number, start: BlockStart): string {
    if (start.type === 'text' || start.type === 'reasoning') {
      blocks.set(index, { kind: start.type });
      return '';
    }
    if (start.type === 'tool_call') return toolStart(index, start);
    // A block that arrives whole: its content as if streamed (an image has no place in chat and is left out).
    const whole = start.block;
    if (whole.type === 'text' || whole.type === 'reasoning') {
      blocks.set(index, { kind: whole.type });
      return deltaOf(index, whole.text);
    }
    if (whole.type === 'tool_call') return toolStart(index, whole) + argumentsOf(index, whole.arguments) + blockEnd(index);
    blocks.set(index, { kind: 'none' });
    return '';
  }

  function deltaOf(index: number, text: string): string {
    const block = blocks.get(index);
    if (text === '' || !block) return '';
    if (block.kind === 'text') return delta({ content: text });
    if (block.kind === 'reasoning') return delta({ reasoning_content: text });
    return '';
  }

  function argumentsOf(index: number, args: string): string {
    const block = blocks.get(index);
    if (block?.kind !== 'tool') return '';
    if (block !== active) {
      block.args += args;
      return '';
    }
    return fragment(block, args);
  }

  function blockEnd(index: number): string {
    const block = blocks.get(index);
    if (block?.kind !== 'tool' || block.ended) return '';
    block.ended = true;
    if (block !== active) return '';
    active = undefined;
    return advance(false);
  }

  function finish(event: CanonEvent & { type: 'finish' }): string {
    finished = true;
    if (event.usage) usage = event.usage;
    active = undefined;
    let out = advance(true);
    out += delta({}, finishReason(event.stop, toolCalls > 0));
    if (includeUsage) out += formatFrame(JSON.stringify({ id, object: 'chat.completion.chunk', created, model: ctx.clientModel, choices: [], usage: chatUsageObject(usage) }));
    return out;
  }

  return {
    event(event: CanonEvent): string {
      if (ended || finished) return '';
      switch (event.type) {
        case 'start':
          id = completionId(event.id);
          if (event.created !== undefined) created = event.created;
          if (event.usage) usage = { ...usage, ...event.usage };
          return open();
        case 'block_start':
          return open() + blockStart(event.index, event.block);
        case 'delta':
          return open() + (event.text !== undefined ? deltaOf(event.index, event.text) : '') + (event.arguments !== undefined ? argumentsOf(event.index, event.arguments) : '');
        case 'block_end':
          return blockEnd(event.index);
        case 'usage':
          usage = { ...usage, ...event.usage };
          return '';
        case 'finish':
          return open() + finish(event);
        case 'error':
          ended = true;
          return formatFrame(JSON.stringify({ error: chatErrorObject(event.error) }));
      }
    },
    end(): string {
      if (ended) return '';
      ended = true;
      if (finished) return DONE;
      // The answer never finished: never a clean end (the bridge normally sends an error event first).
      return formatFrame(JSON.stringify({ error: chatErrorObject({ status: 502, kind: 'server', message: 'The upstream stream ended before the answer was complete' }) }));
    },
  };
}
