// A canonical answer → the chat.completion object a chat client reads: text, tool calls, reasoning shown in
// `reasoning_content` (the de-facto field), the finish reason from the table, usage in OpenAI's semantics.
import type { CanonBlock, CanonResponse, CodecContext, StopReason, ToolCallBlock } from '../../../core/canonical.ts';
import { chatUsageObject } from '../usage.ts';
import type { Obj } from './checks.ts';
import { FINISH_REASON } from './tables.ts';

/** The id a chat client sees: the upstream's own, in chat's chatcmpl- spelling. */
export const completionId = (id: string): string => (id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`);

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The finish reason, made to agree with what the answer holds: tool_calls exactly when it has tool calls. */
export function finishReason(stop: StopReason, hasToolCalls: boolean): string {
  if (hasToolCalls && (stop === 'end' || stop === 'tool_use')) return 'tool_calls';
  if (!hasToolCalls && stop === 'tool_use') return 'stop';
  return FINISH_REASON[stop];
}

export function chatToolCall(call: ToolCallBlock): Obj {
  return call.custom
    ? { id: call.id, type: 'custom', custom: { name: call.name, input: call.arguments } }
    : { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

export function chatMessage(content: CanonBlock[]): Obj {
  let text: string | null = null;
  let reasoning: string | undefined;
  const calls: Obj[] = [];
  for (const block of content) {
    if (block.type === 'text') text = (text ?? '') + block.text;
    else if (block.type === 'reasoning' && block.text !== '') reasoning = (reasoning ?? '') + block.text;
    else if (block.type === 'tool_call') calls.push(chatToolCall(block));
  }
  return {
    role: 'assistant', content: text, refusal: null, annotations: [],
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
  };
}

export function encodeResponse(res: CanonResponse, ctx: CodecContext): Obj {
  const message = chatMessage(res.content);
  return {
    id: completionId(res.id),
    object: 'chat.completion',
    created: res.created ?? nowSeconds(),
    model: ctx.clientModel,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(res.stop, message.tool_calls !== undefined) }],
    usage: chatUsageObject(res.usage),
  };
}
