// Whole answers both ways: a canonical answer as the Message Anthropic returns, and an Anthropic upstream's Message read back.
import { randomBytes } from 'node:crypto';
import type { CanonBlock, CanonCount, CanonResponse, CodecContext } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { withCallCarriers } from '../../shared/signatures.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { anthropicUsage } from '../usage.ts';
import { isObj, type Obj } from './check.ts';
import { decodeContent, UPSTREAM_SIDE } from './decode-blocks.ts';
import { clientBlock } from './encode-blocks.ts';
import { wireUsage } from './encode-usage.ts';
import { answerCall, customText, outputText } from './structured.ts';
import { STOP_FROM_WIRE, STOP_TO_WIRE } from './tables.ts';

/** msg_… ids as Anthropic's: an upstream's own id is kept behind the prefix; none gets a fresh one. */
export function messageId(id: string): string {
  if (id.startsWith('msg_')) return id;
  return `msg_${id.replace(/[^a-zA-Z0-9_-]/g, '') || randomBytes(12).toString('hex')}`;
}

export function encodeResponse(res: CanonResponse, ctx: CodecContext): Obj {
  return {
    id: messageId(res.id),
    type: 'message',
    role: 'assistant',
    model: ctx.clientModel,
    content: withCallCarriers(res.content).map(clientBlock).filter((b) => b !== undefined),
    stop_reason: STOP_TO_WIRE[res.stop],
    stop_sequence: res.stopSequence ?? null,
    usage: wireUsage(res.usage, true),
  };
}

const notAnAnswer = (what: string) => new GatewayError(502, 'upstream_invalid', `The upstream answered with something that is not ${what}`);

/** count_tokens: {input_tokens}. */
export function decodeCount(json: unknown): CanonCount {
  if (!isObj(json) || typeof json.input_tokens !== 'number') throw notAnAnswer('a token count');
  return { inputTokens: json.input_tokens };
}

const ZERO = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };

export function decodeResponse(json: unknown, ctx: CodecContext): CanonResponse {
  if (!isObj(json) || !Array.isArray(json.content)) {
    throw notAnAnswer('a Messages answer');
  }
  let content: CanonBlock[];
  try {
    content = decodeContent(json.content, 'content', UPSTREAM_SIDE);
  } catch (err) {
    throw new GatewayError(502, 'upstream_invalid', `The upstream's answer is malformed: ${(err as Error).message}`);
  }
  const { blocks, answered } = answerBlocks(content, ctx);
  const wireStop = STOP_FROM_WIRE[String(json.stop_reason)] ?? 'end';
  const stopSequence = typeof json.stop_sequence === 'string' ? json.stop_sequence : undefined;
  return {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : ctx.request.model,
    content: blocks,
    stop: answered && wireStop === 'tool_use' && !blocks.some((b) => b.type === 'tool_call') ? 'end' : wireStop,
    ...(stopSequence === undefined ? {} : { stopSequence }),
    usage: anthropicUsage(json.usage) ?? { ...ZERO },
  };
}

/**
 * Calls in the client's terms: names restored, a freeform tool's `{input}` unwrapped to its raw text, and the
 * structured-output tool's call turned into the answer's text (`answered`: the stop is then a natural end).
 */
function answerBlocks(content: CanonBlock[], ctx: CodecContext): { blocks: CanonBlock[]; answered: boolean } {
  let answered = false;
  const blocks = content.map((block): CanonBlock => {
    if (block.type !== 'tool_call') return block;
    const call = answerCall(block.name, ctx.request);
    const input = parseObject(block.arguments) ?? {};
    if (call.kind === 'output') {
      answered = true;
      return { type: 'text', text: outputText(input, call.wrapped) };
    }
    return call.custom
      ? { ...block, name: call.name, arguments: customText(input), custom: true }
      : { ...block, name: call.name };
  });
  return { blocks, answered };
}
