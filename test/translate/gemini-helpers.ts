// What the Gemini codec tests share: a codec context, running a stream encoder or decoder over a whole stream (SSE or
// a JSON array), and the canonical fixtures as they come back through Gemini (what its grammar cannot carry, named).
import type { CanonEvent, CanonRequest, CanonResponse, CodecContext } from '../../core/canonical.ts';
import { codec } from '../../adapters/gemini/codec/index.ts';
import { framesOf } from '../adapters/helpers.ts';

export const ctxFor = (request: CanonRequest, clientModel = 'model-x'): CodecContext =>
  ({ request, clientModel, defaults: { maxOutputTokens: 4096 } });

/** The request as a Gemini client sent it: stream framing SSE (alt=sse) or a JSON array. */
export const clientRequest = (request: CanonRequest, sse = true): CanonRequest => ({ ...request, extras: { ...request.extras, gemini: { sse } } });

/** The client text an encoder writes for a whole event list, end() included. */
export function encodeAll(events: CanonEvent[], ctx: CodecContext): string {
  const encoder = codec.encodeStream(ctx);
  return events.map((e) => encoder.event(e)).join('') + encoder.end();
}

/** The data of every frame of an SSE text, parsed, each frame checked to be exactly `data: <json>\r\n\r\n`. */
export function sseChunks(text: string): any[] {
  return framesOf(text).map((f) => {
    if (!/^data: [^\r\n]+\r\n\r\n$/.test(f.raw)) throw new Error(`not a Gemini frame: ${JSON.stringify(f.raw)}`);
    return JSON.parse(f.data);
  });
}

/** The canonical events a decoder makes of an upstream's SSE text, end() included. */
export function decodeAll(text: string, ctx: CodecContext): CanonEvent[] {
  const decoder = codec.decodeStream(ctx);
  return [...framesOf(text).flatMap((f) => decoder.frame(f)), ...decoder.end()];
}

/** The canonical events a decoder makes of JSON-array elements, each given as a frame of its JSON text. */
export function decodeElements(elements: unknown[], ctx: CodecContext): CanonEvent[] {
  const decoder = codec.decodeStream(ctx);
  return [...elements.flatMap((e) => { const data = JSON.stringify(e); return decoder.frame({ data, raw: data }); }), ...decoder.end()];
}

/** Strips what the codec adds to a request of its own (the client's framing) to compare with a canonical fixture. */
export const withoutExtras = (req: CanonRequest): CanonRequest => ({ ...req, extras: {} });

/**
 * A fixture answer as a Gemini upstream's answer reads back: Gemini reports no cache writes, and a signature arrives
 * as Gemini's own (a foreign one travelled wrapped, so it reads as the wrapped text).
 */
export function throughGemini(res: CanonResponse): CanonResponse {
  return {
    ...res,
    usage: { ...res.usage, cacheWrite: 0 },
    content: res.content.map((b) => ('signature' in b && b.signature && b.signature.format !== 'gemini'
      ? { ...b, signature: { format: 'gemini', value: `gw1:${b.signature.format}:${b.signature.value}` } }
      : b)),
  };
}
