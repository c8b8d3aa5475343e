// The Responses API event stream for one reply (wire-formats §2.4): one event per frame, sequence_number = frame index.
import type { Reply } from './reply.ts';
import { sseFrame, type StreamPlan } from './respond.ts';
import { countTokens, splitEvenly, splitTokens } from './tokens.ts';

export interface Usage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The parts of a response object that change while it is generated. */
export interface ResponseState {
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  error: { code: string; message: string } | null;
  output: unknown[];
  usage: Usage | null;
}

export function usageOf(input: number, output: number): Usage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** The output item as first announced (in progress) and as finished. */
export interface ResponseItems {
  head: Record<string, unknown> & { id: string };
  final: Record<string, unknown> & { id: string };
}

export interface ResponseStreamInput {
  reply: Reply;
  output: ResponseItems;
  /** The finished response object, as the terminal event carries it. */
  final: Record<string, unknown> & { status: unknown };
  snapshot: (state: ResponseState) => Record<string, unknown>;
  inputTokens: number;
  /** Delta events carry `obfuscation` unless the request turned it off (stream_options.include_obfuscation). */
  obfuscate: boolean;
}

// Real deltas are padded with random characters so their size leaks less; a fixed filler keeps streams reproducible.
const FILLER = 'sImPaDdInG0';

export function streamPlan(input: ResponseStreamInput): StreamPlan {
  const { reply, output, final, snapshot } = input;
  const frames: string[] = [];
  const emit = (type: string, fields: object) => frames.push(sseFrame(JSON.stringify({ type, sequence_number: frames.length, ...fields }), type));
  const obfuscation = (delta: string) => (input.obfuscate ? { obfuscation: FILLER.slice(0, Math.max(1, FILLER.length - delta.length)) } : {});
  const itemId = output.head.id;
  const starting = snapshot({ status: 'in_progress', error: null, output: [], usage: null });

  emit('response.created', { response: starting });
  emit('response.in_progress', { response: starting });
  emit('response.output_item.added', { output_index: 0, item: output.head });
  let pieces: string[];
  if (reply.kind === 'text') {
    const at = { item_id: itemId, output_index: 0, content_index: 0 };
    emit('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
    pieces = splitTokens(reply.text);
    for (const delta of pieces) emit('response.output_text.delta', { ...at, delta, logprobs: [], ...obfuscation(delta) });
    emit('response.output_text.done', { ...at, text: reply.text, logprobs: [] });
    emit('response.content_part.done', { ...at, part: { type: 'output_text', text: reply.text, annotations: [], logprobs: [] } });
    // The item in output_item.done carries no logprobs, as in the reference capture.
    emit('response.output_item.done', { output_index: 0, item: { ...output.final, content: [{ type: 'output_text', text: reply.text, annotations: [] }] } });
  } else {
    pieces = splitEvenly(reply.arguments, 3);
    for (const delta of pieces) emit('response.function_call_arguments.delta', { item_id: itemId, output_index: 0, delta, ...obfuscation(delta) });
    emit('response.function_call_arguments.done', { item_id: itemId, output_index: 0, name: reply.name, arguments: reply.arguments });
    emit('response.output_item.done', { output_index: 0, item: output.final });
  }
  const firstContent = reply.kind === 'text' ? 4 : 3;
  const endContent = firstContent + pieces.length;
  emit(`response.${final.status}`, { response: final });

  // A model failure ends the stream with response.failed (never `error`), billing only what was streamed.
  const errorFrame = (at: number) => {
    const streamed = countTokens(pieces.slice(0, at - firstContent).join(''));
    const failed = snapshot({
      status: 'failed',
      error: { code: 'server_error', message: 'simulated mid-stream failure' },
      output: [],
      usage: usageOf(input.inputTokens, streamed),
    });
    return sseFrame(JSON.stringify({ type: 'response.failed', sequence_number: at, response: failed }), 'response.failed');
  };
  return { frames, firstContent, endContent, errorFrame };
}
