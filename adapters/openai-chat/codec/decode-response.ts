// A chat upstream's chat.completion → the canonical answer: reasoning_content (some OpenAI-compatible upstreams) as
// reasoning, text, tool calls with their names restored, and the upstream's own usage, exactly (it is what is billed).
// A refusal becomes the answer's text with stop content_filter: the model declined, and every client format has a
// filtered / refused stop reason to say so.
import type { CanonBlock, CanonResponse, CodecContext, StopReason } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { restoreName, OPENAI_NAMES } from '../../shared/tool-names.ts';
import { chatUsage } from '../usage.ts';
import { isObj, type Obj } from './checks.ts';
import { STOP_REASON } from './tables.ts';

const ZERO = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

/** The answer's reasoning text: reasoning_content, or `reasoning` as some OpenAI-compatible servers name it. */
export const reasoningText = (o: Obj): unknown => (typeof o.reasoning_content === 'string' ? o.reasoning_content : o.reasoning);

/** The canonical stop for a chat finish_reason, given what the answer held. */
export function stopReason(finish: unknown, hasToolCalls: boolean, refused: boolean): StopReason {
  const stop = STOP_REASON[typeof finish === 'string' ? finish : ''] ?? 'end';
  // Some OpenAI-compatible upstreams say `stop` after tool calls.
  if (stop === 'end' && hasToolCalls) return 'tool_use';
  if (stop === 'end' && refused) return 'content_filter';
  return stop;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** A tool call of a whole answer, or undefined when it is not one. */
function toolCall(call: unknown, ctx: CodecContext, n: number): CanonBlock | undefined {
  if (!isObj(call)) return undefined;
  const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${n}`;
  const custom = isObj(call.custom) ? call.custom : undefined;
  const fn = isObj(call.function) ? call.function : custom;
  if (!fn || typeof fn.name !== 'string') return undefined;
  const args = custom ? custom.input : fn.arguments;
  return {
    type: 'tool_call', id, name: restoreName(fn.name, ctx.request, OPENAI_NAMES),
    arguments: typeof args === 'string' ? args : isObj(args) ? JSON.stringify(args) : '',
    ...(custom ? { custom: true } : {}),
  };
}

export function decodeResponse(json: unknown, ctx: CodecContext): CanonResponse {
  if (!isObj(json) || !Array.isArray(json.choices)) throw new GatewayError(502, 'upstream_invalid', 'The upstream answered with something that is not a chat completion');
  const choice = json.choices.find((c) => isObj(c) && (c.index ?? 0) === 0) as Obj | undefined;
  const message = isObj(choice?.message) ? choice.message : {};
  const content: CanonBlock[] = [];
  const reasoning = reasoningText(message);
  if (typeof reasoning === 'string' && reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
  const text = textOf(message.content);
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  if (text + refusal !== '') content.push({ type: 'text', text: text + refusal });
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : isObj(message.function_call) ? [{ function: message.function_call }] : [];
  calls.forEach((call, n) => {
    const block = toolCall(call, ctx, n);
    if (block) content.push(block);
  });
  const hasToolCalls = content.some((b) => b.type === 'tool_call');
  return {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : '',
    content,
    stop: stopReason(choice?.finish_reason, hasToolCalls, refusal !== ''),
    usage: chatUsage(json.usage) ?? { ...ZERO },
    ...(typeof json.created === 'number' ? { created: json.created } : {}),
  };
}
