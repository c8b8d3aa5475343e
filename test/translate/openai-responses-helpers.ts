// What the openai-responses codec tests share: contexts, a stream run through the encoder or the decoder, upstream
// Response objects and event streams written as OpenAI sends them.
import type { CanonEvent, CanonRequest, CodecContext } from '../../core/canonical.ts';
import { SseParser } from '../../adapters/shared/sse.ts';
import { codec } from '../../adapters/openai-responses/codec/index.ts';
import { framesOf, sse } from '../adapters/helpers.ts';

export { codec, framesOf, sse };

export const FORMAT = 'openai-responses';
export const decodeCtx = { model: 'model-x', path: '/v1/responses', query: '' };

/** A codec context for answers to `request`, with the Responses extras a client's request would have left. */
export function ctxFor(request: CanonRequest, extras: Record<string, unknown> = {}): CodecContext {
  return {
    request: { ...request, extras: { ...request.extras, [FORMAT]: { responseId: 'resp_test', ...extras } } },
    clientModel: 'client-model',
    defaults: { maxOutputTokens: 4096 },
  };
}

/** The client's stream for canonical events (end() included). */
export function encodeAll(events: CanonEvent[], ctx: CodecContext): string {
  const encoder = codec.encodeStream(ctx);
  return events.map((e) => encoder.event(e)).join('') + encoder.end();
}

/** Each event of a Responses SSE text: its `event:` name and parsed data. */
export function eventsOf(text: string): Array<Record<string, any>> {
  return framesOf(text).map((f) => {
    const data = JSON.parse(f.data);
    if (data.type !== f.event) throw new Error(`event line ${f.event} names data of type ${data.type}`);
    return data;
  });
}

/** Canonical events for an upstream SSE text, fed to the decoder in small chunks as the network would. */
export function decodeAll(text: string, ctx: CodecContext, chunk = 11): CanonEvent[] {
  const decoder = codec.decodeStream(ctx);
  const parser = new SseParser();
  const events: CanonEvent[] = [];
  for (let i = 0; i < text.length; i += chunk) for (const f of parser.push(text.slice(i, i + chunk))) events.push(...decoder.frame(f));
  return [...events, ...decoder.end()];
}

const USAGE_ZERO = { cached_tokens: 0 };

/** An upstream Response object as OpenAI returns it. */
export function upstreamResponse(output: unknown[], usage: [number, number, number?, number?], extra: Record<string, unknown> = {}) {
  const [input, out, cached = 0, reasoning = 0] = usage;
  return {
    id: 'resp_up', object: 'response', created_at: 1767225600, status: 'completed', error: null, incomplete_details: null,
    model: 'gpt-5-2025-08-07', output, parallel_tool_calls: true, tool_choice: 'auto', tools: [],
    usage: { input_tokens: input, input_tokens_details: cached ? { cached_tokens: cached } : USAGE_ZERO, output_tokens: out, output_tokens_details: { reasoning_tokens: reasoning }, total_tokens: input + out },
    ...extra,
  };
}

export const message = (id: string, text: string) =>
  ({ id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] });
export const functionCall = (id: string, callId: string, name: string, args: string) =>
  ({ id, type: 'function_call', status: 'completed', call_id: callId, name, arguments: args });

/** An upstream event stream: each entry is [type, fields]; sequence numbers are added in order. */
export function upstreamStream(events: Array<[string, Record<string, unknown>]>): string {
  return sse(events.map(([type, fields], i) => [type, { type, sequence_number: i, ...fields }]));
}

/** What `fn` threw (a GatewayError, for refusals), or undefined when it did not throw. */
export function thrown(fn: () => unknown): { status?: number; param?: string | null; code?: string; message?: string } | undefined {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  return undefined;
}
