// The Responses API event stream for one reply (docs/wire-formats.md#responses-stream): one event per frame, sequence_number = frame index,
// each output item announced, filled with deltas and finished in turn (reasoning, then a message or function calls).
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

/** `output` includes `reasoning`, as OpenAI bills it. */
export function usageOf(input: number, output: number, reasoning = 0): Usage {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: input + output,
  };
}

type Shape = Record<string, unknown> & { id: string };

/** One output item as first announced (in progress) and as finished, with what its deltas carry. */
export type OutputItem =
  | { kind: 'reasoning'; head: Shape; final: Shape; summary?: string }
  | { kind: 'message'; head: Shape; final: Shape; text: string }
  | { kind: 'function_call'; head: Shape; final: Shape; name: string; arguments: string };

export interface ResponseStreamInput {
  items: OutputItem[];
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
  const { items, final, snapshot } = input;
  const frames: string[] = [];
  // The text each delta frame carried, by frame index, so a failure bills only what was streamed.
  const streamed = new Map<number, string>();
  const emit = (type: string, fields: object) => frames.push(sseFrame(JSON.stringify({ type, sequence_number: frames.length, ...fields }), type));
  const obfuscation = (delta: string) => (input.obfuscate ? { obfuscation: FILLER.slice(0, Math.max(1, FILLER.length - delta.length)) } : {});
  const deltas = (type: string, at: object, pieces: string[], extra: object = {}) => {
    for (const delta of pieces) {
      streamed.set(frames.length, delta);
      emit(type, { ...at, delta, ...extra, ...obfuscation(delta) });
    }
  };
  const starting = snapshot({ status: 'in_progress', error: null, output: [], usage: null });

  emit('response.created', { response: starting });
  emit('response.in_progress', { response: starting });
  items.forEach((item, output_index) => {
    emit('response.output_item.added', { output_index, item: item.head });
    const at = { item_id: item.head.id, output_index };
    if (item.kind === 'reasoning' && item.summary !== undefined) {
      const part = { ...at, summary_index: 0 };
      emit('response.reasoning_summary_part.added', { ...part, part: { type: 'summary_text', text: '' } });
      deltas('response.reasoning_summary_text.delta', part, splitTokens(item.summary));
      emit('response.reasoning_summary_text.done', { ...part, text: item.summary });
      emit('response.reasoning_summary_part.done', { ...part, part: { type: 'summary_text', text: item.summary } });
    } else if (item.kind === 'message') {
      const part = { ...at, content_index: 0 };
      emit('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      deltas('response.output_text.delta', part, splitTokens(item.text), { logprobs: [] });
      emit('response.output_text.done', { ...part, text: item.text, logprobs: [] });
      emit('response.content_part.done', { ...part, part: { type: 'output_text', text: item.text, annotations: [], logprobs: [] } });
    } else if (item.kind === 'function_call') {
      deltas('response.function_call_arguments.delta', at, splitEvenly(item.arguments, 3));
      emit('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
    }
    emit('response.output_item.done', { output_index, item: doneItem(item) });
  });
  const deltaFrames = [...streamed.keys()];
  const firstContent = deltaFrames[0] ?? frames.length;
  const endContent = (deltaFrames[deltaFrames.length - 1] ?? frames.length - 1) + 1;
  emit(`response.${final.status}`, { response: final });

  // A model failure ends the stream with response.failed (never `error`), billing only what was streamed.
  const errorFrame = (at: number) => {
    const sent = deltaFrames.filter((i) => i < at).map((i) => streamed.get(i)).join('');
    const failed = snapshot({
      status: 'failed',
      error: { code: 'server_error', message: 'simulated mid-stream failure' },
      output: [],
      usage: usageOf(input.inputTokens, countTokens(sent)),
    });
    return sseFrame(JSON.stringify({ type: 'response.failed', sequence_number: at, response: failed }), 'response.failed');
  };
  return { frames, firstContent, endContent, errorFrame };
}

/** The item output_item.done carries: a message without logprobs, as in the reference capture; others as finished. */
function doneItem(item: OutputItem): Shape {
  if (item.kind !== 'message') return item.final;
  return { ...item.final, content: [{ type: 'output_text', text: item.text, annotations: [] }] };
}
