// An OpenAI upstream's whole Response → the canonical answer: output items as blocks (tool names restored to the
// client's), status and incomplete_details as the stop reason, usage exactly as billed.
import type { CanonBlock, CanonResponse, Codec, CodecContext } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { openaiTokenUsage } from '../../shared/openai-usage.ts';
import { OPENAI_NAMES, restoreName } from '../../shared/tool-names.ts';
import { streamError } from './errors.ts';
import { reasoningBlockOf } from './reasoning.ts';
import { isObj, type Obj } from './read.ts';
import { ERROR_BY_KIND, STOP_BY_INCOMPLETE, stopOfCompleted } from './tables.ts';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The blocks of one output item; `refused` when a message part is a refusal. Items of built-in tools give none. */
export function blocksOfItem(item: Obj, ctx: CodecContext): { blocks: CanonBlock[]; refused: boolean } {
  switch (item.type) {
    case 'message': {
      const parts = Array.isArray(item.content) ? item.content.filter(isObj) : [];
      const blocks: CanonBlock[] = parts.map((p) => ({ type: 'text', text: p.type === 'refusal' ? str(p.refusal) : str(p.text) }));
      return { blocks, refused: parts.some((p) => p.type === 'refusal') };
    }
    case 'function_call':
      return { blocks: [{ type: 'tool_call', id: str(item.call_id), name: restoreName(str(item.name), ctx.request, OPENAI_NAMES), arguments: str(item.arguments) }], refused: false };
    case 'custom_tool_call':
      return { blocks: [{ type: 'tool_call', id: str(item.call_id), name: restoreName(str(item.name), ctx.request, OPENAI_NAMES), arguments: str(item.input), custom: true }], refused: false };
    case 'reasoning':
      return { blocks: [reasoningBlockOf(item)], refused: false };
    default:
      return { blocks: [], refused: false };
  }
}

/** Status (and the answer's content) → canonical stop; a failed or unfinished response is an error. */
export function stopOf(response: Obj, hasCall: boolean, refused: boolean): CanonResponse['stop'] {
  if (response.status === 'incomplete') {
    const reason = isObj(response.incomplete_details) ? str(response.incomplete_details.reason) : '';
    return STOP_BY_INCOMPLETE[reason] ?? 'max_tokens';
  }
  if (response.status === 'completed' || response.status === undefined) return stopOfCompleted(hasCall, refused);
  const error = response.status === 'failed' && isObj(response.error)
    ? streamError(response.error)
    : streamError({ code: 'server_error', message: `The upstream response ended with status '${str(response.status)}'` });
  throw new GatewayError(ERROR_BY_KIND[error.kind].status, error.code ?? 'upstream_failed', error.message);
}

export const decodeResponse: Codec['decodeResponse'] = (json, ctx) => {
  if (!isObj(json)) throw new GatewayError(502, 'bad_upstream_response', 'The upstream answered with something that is not a Response object');
  const content: CanonBlock[] = [];
  let refused = false;
  for (const item of Array.isArray(json.output) ? json.output.filter(isObj) : []) {
    const of = blocksOfItem(item, ctx);
    content.push(...of.blocks);
    refused ||= of.refused;
  }
  const hasCall = content.some((b) => b.type === 'tool_call');
  return {
    id: str(json.id),
    model: str(json.model),
    content,
    stop: stopOf(json, hasCall, refused),
    usage: openaiTokenUsage(json.usage) ?? { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    ...(typeof json.created_at === 'number' ? { created: json.created_at } : {}),
  };
};

export const decodeCount: Codec['decodeCount'] = (json) =>
  ({ inputTokens: isObj(json) && typeof json.input_tokens === 'number' ? json.input_tokens : 0 });
