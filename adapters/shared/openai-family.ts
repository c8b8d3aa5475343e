// What the OpenAI formats (chat completions, Responses, images, embeddings) share: how they reach an OpenAI platform,
// and the status each canonical error kind carries when an OpenAI error names only a code (mid-stream).
import type { ErrorKind } from '../../core/canonical.ts';
import type { FormatAdapter } from '../../core/types.ts';
import { OPENAI_CREDENTIAL_CHECK, OPENAI_REQUEST_HEADERS, RESPONSE_HEADERS } from './headers.ts';

export const OPENAI_FAMILY: Pick<FormatAdapter, 'platforms' | 'upstreamAuth' | 'forwardHeaders' | 'returnHeaders' | 'credentialCheck'> = {
  platforms: ['openai'],
  upstreamAuth: 'bearer',
  forwardHeaders: OPENAI_REQUEST_HEADERS,
  returnHeaders: RESPONSE_HEADERS,
  credentialCheck: OPENAI_CREDENTIAL_CHECK,
};

export const OPENAI_STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid_request: 400, authentication: 401, billing: 402, permission: 403, not_found: 404, request_too_large: 413,
  rate_limit: 429, server: 500, overloaded: 503, timeout: 504,
};
