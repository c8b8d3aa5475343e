// The Anthropic Messages event stream for one reply (docs/wire-formats.md#anthropic-stream): one content block at a time, each opened,
// filled with deltas and closed; usage in message_start and, cumulative, in message_delta.
import type { SimContext } from './context.ts';
import { sseFrame, type StreamPlan } from './respond.ts';
import { splitEvenly, splitTokens } from './tokens.ts';

export interface AnthropicReply {
  /** The Message's content blocks, as a whole answer carries them. */
  blocks: Array<Record<string, unknown>>;
  stopReason: string;
  outputTokens: number;
}

/** The block as content_block_start announces it: empty text, empty input, empty thinking and signature. */
function opening(block: Record<string, unknown>): Record<string, unknown> {
  if (block.type === 'tool_use') return { ...block, input: {} };
  if (block.type === 'thinking') return { type: 'thinking', thinking: '', signature: '' };
  return { type: 'text', text: '' };
}

/** The deltas that fill a block: text a token at a time, tool input in fragments (the first one empty, as the real service sends). */
function deltasOf(block: Record<string, unknown>): object[] {
  if (block.type === 'tool_use') return ['', ...splitEvenly(JSON.stringify(block.input), 3)].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
  if (block.type === 'thinking') {
    const text = splitTokens(String(block.thinking)).map((thinking) => ({ type: 'thinking_delta', thinking }));
    return [...text, { type: 'signature_delta', signature: block.signature }];
  }
  return splitTokens(String(block.text)).map((text) => ({ type: 'text_delta', text }));
}

export function streamPlan(ctx: SimContext, model: string, reply: AnthropicReply, inputTokens: number): StreamPlan {
  const frames: string[] = [];
  const emit = (type: string, fields: object = {}) => frames.push(sseFrame(JSON.stringify({ type, ...fields }), type));
  emit('message_start', {
    message: {
      id: `msg_sim_${ctx.seq}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1, service_tier: 'standard' },
    },
  });
  let firstContent = 0;
  reply.blocks.forEach((block, index) => {
    emit('content_block_start', { index, content_block: opening(block) });
    if (index === 0) {
      // Written by hand because the real service spaces this one payload differently from the rest.
      frames.push(sseFrame('{"type": "ping"}', 'ping'));
      firstContent = frames.length;
    }
    for (const delta of deltasOf(block)) emit('content_block_delta', { index, delta });
    emit('content_block_stop', { index });
  });
  // A stream fault never lands on the last block's stop or later.
  const endContent = frames.length - 1;
  emit('message_delta', { delta: { stop_reason: reply.stopReason, stop_sequence: null }, usage: { output_tokens: reply.outputTokens } });
  emit('message_stop');
  const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  return { frames, firstContent, endContent, errorFrame: () => sseFrame(JSON.stringify(error), 'error') };
}
