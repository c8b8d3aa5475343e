// Whole answers both ways (a GenerateContentResponse for a Gemini client; a Gemini upstream's answer read back through
// the stream decoder, so whole and streamed answers decode alike), and countTokens answers.
import type { CanonCount, CanonResponse, CodecContext } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { collectEvents } from '../../shared/collect-events.ts';
import { GeminiStreamDecoder } from './decode-stream.ts';
import { encodeUsage } from './encode-usage.ts';
import { partOf } from './parts.ts';
import { isObj, type Obj } from './read.ts';
import { STOP_TO_WIRE } from './tables.ts';

export function encodeResponse(res: CanonResponse, ctx: CodecContext): unknown {
  const parts = res.content.map(partOf).filter((p): p is Obj => p !== undefined);
  return {
    // A filtered answer has no content, as Google sends it.
    candidates: [{ ...(parts.length > 0 ? { content: { parts, role: 'model' } } : {}), finishReason: STOP_TO_WIRE[res.stop], index: 0 }],
    usageMetadata: encodeUsage(res.usage),
    modelVersion: ctx.clientModel,
    responseId: res.id,
  };
}

/** A generateContent answer (or the chunks of a JSON-array stream) → canonical. */
export function decodeResponse(json: unknown, ctx: CodecContext): CanonResponse {
  const decoder = new GeminiStreamDecoder(ctx);
  const chunks = (Array.isArray(json) ? json : [json]).filter(isObj);
  const events = chunks.flatMap((chunk) => decoder.chunk(chunk));
  // A whole answer ended even without a finishReason: there is no later chunk to wait for.
  decoder.settle();
  const { error, ...answer } = collectEvents([...events, ...decoder.end()]);
  if (error) throw new GatewayError(error.error.status, error.error.code ?? 'upstream_error', error.error.message);
  return answer;
}

export function encodeCount(count: CanonCount): unknown {
  // Google's answer has no such field; a gateway's estimate says so beside the count.
  return { totalTokens: count.inputTokens, ...(count.estimated ? { estimated: true } : {}) };
}

export function decodeCount(json: unknown): CanonCount {
  const total = isObj(json) ? json.totalTokens : undefined;
  return { inputTokens: typeof total === 'number' && Number.isFinite(total) ? total : 0 };
}
