// The Gemini codec (docs/translation.md): Gemini CLI and the @google/genai SDK as clients of any upstream, and a Gemini
// account as the upstream of any client format. Pure: no I/O, stream state per request.
import type { Codec } from '../../../core/canonical.ts';
import { decodeRequest } from './decode-request.ts';
import { GeminiStreamDecoder } from './decode-stream.ts';
import { encodeRequest } from './encode-request.ts';
import { GeminiStreamEncoder, wantsSse } from './encode-stream.ts';
import { decodeError, encodeError } from './errors.ts';
import { decodeCount, decodeResponse, encodeCount, encodeResponse } from './response.ts';

export const codec: Codec = {
  decodeRequest,
  encodeResponse,
  encodeStream: (ctx) => new GeminiStreamEncoder(ctx),
  // Without alt=sse Google streams one JSON array, served as JSON.
  streamContentType: (req) => (wantsSse(req) ? 'text/event-stream' : 'application/json; charset=UTF-8'),
  encodeCount,
  encodeError,

  encodeRequest,
  decodeResponse,
  decodeStream: (ctx) => new GeminiStreamDecoder(ctx),
  decodeCount,
  decodeError,
  countsTokens: true,
  // Gemini reads media inline (or from its own Files API): the bridge fetches url images and files first.
  inlineMedia: true,
  // Gemini 3 signs the first function call of each step and checks it comes back (docs/translation.md "Signatures").
  signsCalls: true,
  // thoughtSignature sits on the functionCall part the client replays.
  returnsCallSignatures: () => true,
};
