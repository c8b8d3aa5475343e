// The Chat Completions codec: a chat client's requests and answers, and a chat upstream's, through the canonical model
// (docs/translation.md). Chat has no token counting endpoint on either side.
import type { CanonCount, Codec } from '../../../core/canonical.ts';
import { num } from '../../../core/usage.ts';
import { isObj } from './checks.ts';
import { decodeRequest } from './decode-request.ts';
import { decodeResponse } from './decode-response.ts';
import { decodeStream } from './decode-stream.ts';
import { encodeRequest } from './encode-request.ts';
import { encodeResponse } from './encode-response.ts';
import { encodeStream } from './encode-stream.ts';
import { decodeError, encodeError } from './errors.ts';

export const codec: Codec = {
  decodeRequest,
  encodeResponse,
  encodeStream,
  streamContentType: () => 'text/event-stream; charset=utf-8',
  // OpenAI has no count endpoint for chat: a count asked through a chat route is answered in this small shape of the
  // gateway's own, saying whether it is an estimate.
  encodeCount: (count: CanonCount) => ({ input_tokens: count.inputTokens, estimated: count.estimated === true }),
  encodeError,

  encodeRequest,
  decodeResponse,
  decodeStream,
  // Never asked of a chat upstream (countsTokens is false); reads back the shape encodeCount writes.
  decodeCount: (json) => ({ inputTokens: num(isObj(json) ? json.input_tokens : undefined), ...(isObj(json) && json.estimated === true ? { estimated: true } : {}) }),
  decodeError,
  countsTokens: false,
  // Chat takes image URLs as they are; files by URL are refused by the encoder (see encode-messages.ts).
  inlineMedia: false,
};
