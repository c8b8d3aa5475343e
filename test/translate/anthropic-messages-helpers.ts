// What the Anthropic Messages codec tests share: a codec context, running a stream encoder or decoder over a whole
// stream, and a checker of the Messages stream grammar a strict client (Claude Code, the SDK's MessageStream) relies on.
import type { CanonEvent, CanonRequest, CodecContext } from '../../core/canonical.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { framesOf } from '../adapters/helpers.ts';
import { clientFixture } from '../helpers/client-fixtures.ts';

export const DEFAULT_MAX = 4096;

/** The recorded Claude Code request's body (list markers taken out). */
export const claudeCodeBody = (): Record<string, any> => clientFixture('claude-code').body as Record<string, any>;

export const ctxFor = (request: CanonRequest, clientModel = 'claude-client'): CodecContext =>
  ({ request, clientModel, defaults: { maxOutputTokens: DEFAULT_MAX } });

/** The client frames an encoder writes for a whole event list, end() included. */
export function encodeAll(events: CanonEvent[], ctx: CodecContext): string {
  const encoder = codec.encodeStream(ctx);
  return events.map((e) => encoder.event(e)).join('') + encoder.end();
}

/** The canonical events a decoder makes of a whole upstream stream, end() included. */
export function decodeAll(text: string, ctx: CodecContext): CanonEvent[] {
  const decoder = codec.decodeStream(ctx);
  return [...framesOf(text).flatMap((f) => decoder.frame(f)), ...decoder.end()];
}

/** A stream's events as [event name, parsed data]. */
export const wireEvents = (text: string): Array<{ event: string | undefined; data: any }> =>
  framesOf(text).map((f) => ({ event: f.event, data: JSON.parse(f.data) }));

/**
 * The grammar problems of a Messages stream (none: valid): message_start first; blocks indexed 0, 1, 2… in start order,
 * one open at a time, deltas only for the open block and of its kind; tool_use starts with input {} and gets its
 * arguments from input_json_delta; `event:` equals data.type; message_delta then message_stop last, or an error event.
 */
export function grammarProblems(text: string): string[] {
  const problems: string[] = [];
  const events = wireEvents(text);
  let open: { index: number; type: string } | undefined;
  let next = 0;
  const deltaFor: Record<string, string[]> = {
    text: ['text_delta'], thinking: ['thinking_delta', 'signature_delta'], tool_use: ['input_json_delta'], redacted_thinking: [],
  };
  events.forEach(({ event, data }, i) => {
    if (event !== data.type) problems.push(`${i}: event ${event} carries ${data.type}`);
    if (i === 0 && data.type !== 'message_start' && data.type !== 'error') problems.push('the stream does not open with message_start');
    switch (data.type) {
      case 'content_block_start':
        if (open) problems.push(`${i}: block ${data.index} starts while ${open.index} is open`);
        if (data.index !== next) problems.push(`${i}: block index ${data.index}, expected ${next}`);
        if (data.content_block.type === 'tool_use' && JSON.stringify(data.content_block.input) !== '{}') problems.push(`${i}: tool_use starts with input`);
        open = { index: data.index, type: data.content_block.type };
        next++;
        break;
      case 'content_block_delta':
        if (!open || open.index !== data.index) problems.push(`${i}: delta for ${data.index}, open is ${open?.index}`);
        else if (!deltaFor[open.type]?.includes(data.delta.type)) problems.push(`${i}: ${data.delta.type} in a ${open.type} block`);
        break;
      case 'content_block_stop':
        if (open?.index !== data.index) problems.push(`${i}: stop for ${data.index}, open is ${open?.index}`);
        open = undefined;
        break;
      case 'message_delta':
        if (open) problems.push(`${i}: message_delta while block ${open.index} is open`);
        if (events[i + 1]?.data.type !== 'message_stop' || i + 2 !== events.length) problems.push(`${i}: message_delta is not followed by the final message_stop`);
        break;
      case 'error':
        if (i + 1 !== events.length) problems.push(`${i}: events after the error`);
        break;
    }
  });
  const lastType = events[events.length - 1]?.data.type;
  if (lastType !== 'message_stop' && lastType !== 'error') problems.push(`the stream ends with ${lastType}`);
  return problems;
}
