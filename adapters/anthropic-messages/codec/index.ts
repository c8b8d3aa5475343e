// The Anthropic Messages codec (docs/translation.md): Claude Code and the Anthropic SDK as clients of any upstream, and
// an Anthropic account as the upstream of any client format. Pure: no I/O, stream state per request.
import type { Codec } from '../../../core/canonical.ts';
import { decodeRequest } from './decode-request.ts';
import { decodeStream } from './decode-stream.ts';
import { encodeRequest } from './encode-request.ts';
import { encodeStream } from './encode-stream.ts';
import { decodeError, encodeError } from './errors.ts';
import { decodeCount, decodeResponse, encodeResponse } from './response.ts';

export const codec: Codec = {
  decodeRequest,
  encodeResponse,
  encodeStream,
  streamContentType: () => 'text/event-stream; charset=utf-8',
  // Anthropic's counter answers {input_tokens}; an estimate says so (Claude Code reads input_tokens only).
  encodeCount: (count) => ({ input_tokens: count.inputTokens, ...(count.estimated ? { estimated: true } : {}) }),
  encodeError,

  encodeRequest,
  decodeResponse,
  decodeStream,
  decodeCount,
  decodeError,
  countsTokens: true,
  // Anthropic fetches url images and PDFs itself.
  inlineMedia: false,
  // A tool call's signature rides in a thinking block before it (withCallCarriers), which the client replays.
  returnsCallSignatures: () => true,
};
