// The OpenAI Responses codec: Responses clients (Codex CLI, the openai SDK's responses.*) served by any upstream, and
// OpenAI accounts reached through /v1/responses by clients of other formats. See docs/translation.md.
import type { Codec } from '../../../core/canonical.ts';
import { decodeRequest } from './decode-request.ts';
import { decodeCount, decodeResponse } from './decode-response.ts';
import { decodeStream } from './decode-stream.ts';
import { encodeCount, encodeResponse } from './encode-response.ts';
import { encodeRequest } from './encode-request.ts';
import { encodeStream } from './encode-stream.ts';
import { decodeError, encodeError } from './errors.ts';
import { asksEncrypted } from './response-object.ts';
import { state } from './state.ts';

export const codec: Codec = {
  decodeRequest,
  encodeResponse,
  encodeStream,
  streamContentType: () => 'text/event-stream; charset=utf-8',
  encodeCount,
  encodeError,
  encodeRequest,
  decodeResponse,
  decodeStream,
  decodeCount,
  decodeError,
  state,
  countsTokens: true,
  // OpenAI fetches image and file URLs itself.
  inlineMedia: false,
  // Only a client that asked for encrypted_content gets (and replays) the reasoning item that carries a call's signature.
  returnsCallSignatures: asksEncrypted,
};
