// The Gemini codec's tables: finish reasons and error statuses both ways, tool-calling modes, and reasoning effort ↔ thinking.
import type { ErrorKind, ReasoningEffort, StopReason } from '../../../core/canonical.ts';

/** This codec's format name: the tag on the signatures it makes and the key of its extras. */
export const FORMAT = 'gemini';

/** Google's documented thoughtSignature for a function call whose real signature is unknown (thought-signatures FAQ). */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/**
 * finishReason → canonical. A STOP with functionCall parts is tool_use (decided by the decoder, which sees the parts).
 * The model refusing or being cut off by a filter is content_filter; a failed or unexpected tool call ends the answer.
 */
export const STOP_FROM_WIRE: Record<string, StopReason> = {
  STOP: 'end', MAX_TOKENS: 'max_tokens',
  SAFETY: 'content_filter', RECITATION: 'content_filter', LANGUAGE: 'content_filter', BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter', SPII: 'content_filter', IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter', IMAGE_RECITATION: 'content_filter', IMAGE_OTHER: 'content_filter',
  MALFORMED_FUNCTION_CALL: 'end', UNEXPECTED_TOOL_CALL: 'end', TOO_MANY_TOOL_CALLS: 'end', NO_IMAGE: 'end',
  OTHER: 'end', FINISH_REASON_UNSPECIFIED: 'end',
};

/** Canonical → finishReason: Gemini ends tool calls and stop sequences with STOP too; it has no pause. */
export const STOP_TO_WIRE: Record<StopReason, string> = {
  end: 'STOP', stop_sequence: 'STOP', tool_use: 'STOP', max_tokens: 'MAX_TOKENS', content_filter: 'SAFETY', pause: 'STOP',
};

/** google.rpc status name → canonical kind (docs/wire-formats.md#gemini-errors; docs/translation.md, Errors). */
export const KIND_FROM_STATUS: Record<string, ErrorKind> = {
  INVALID_ARGUMENT: 'invalid_request', FAILED_PRECONDITION: 'invalid_request', OUT_OF_RANGE: 'invalid_request',
  ALREADY_EXISTS: 'invalid_request', UNIMPLEMENTED: 'invalid_request', UNAUTHENTICATED: 'authentication',
  PERMISSION_DENIED: 'permission', NOT_FOUND: 'not_found', RESOURCE_EXHAUSTED: 'rate_limit', INTERNAL: 'server',
  UNKNOWN: 'server', DATA_LOSS: 'server', ABORTED: 'server', CANCELLED: 'server', UNAVAILABLE: 'overloaded',
  DEADLINE_EXCEEDED: 'timeout',
};

/**
 * Canonical kind → how Google answers it: HTTP status and status name. Google has no 402 or 529: an exhausted balance
 * is its 429 RESOURCE_EXHAUSTED ("check your plan and billing details"), an overloaded model its 503 UNAVAILABLE.
 */
export const WIRE_BY_KIND: Record<ErrorKind, { status: number; name: string }> = {
  invalid_request: { status: 400, name: 'INVALID_ARGUMENT' }, authentication: { status: 401, name: 'UNAUTHENTICATED' },
  billing: { status: 429, name: 'RESOURCE_EXHAUSTED' }, permission: { status: 403, name: 'PERMISSION_DENIED' },
  not_found: { status: 404, name: 'NOT_FOUND' }, request_too_large: { status: 413, name: 'INVALID_ARGUMENT' },
  rate_limit: { status: 429, name: 'RESOURCE_EXHAUSTED' }, server: { status: 500, name: 'INTERNAL' },
  overloaded: { status: 503, name: 'UNAVAILABLE' }, timeout: { status: 504, name: 'DEADLINE_EXCEEDED' },
};

/** An HTTP status without a readable Google body → kind (a proxy's HTML page, a cut connection). */
export const KIND_BY_HTTP: Record<number, ErrorKind> = {
  400: 'invalid_request', 401: 'authentication', 402: 'billing', 403: 'permission', 404: 'not_found', 408: 'timeout',
  413: 'request_too_large', 429: 'rate_limit', 500: 'server', 502: 'server', 503: 'overloaded', 504: 'timeout', 529: 'overloaded',
};

/** functionCallingConfig.mode ↔ canonical tool choice (a named tool is ANY with allowedFunctionNames). */
export const MODE_TO_WIRE = { auto: 'AUTO', none: 'NONE', required: 'ANY', tool: 'ANY' } as const;

/** docs/translation.md "Reasoning": the thinking budget for an effort. */
export const BUDGET_BY_EFFORT: Record<ReasoningEffort, number> = {
  none: 0, minimal: 1024, low: 1024, medium: 4096, high: 10240, xhigh: 32768, max: 32768,
};

/** Gemini 3 thinkingLevel → effort (and back, for a client that names a level). */
export const EFFORT_BY_LEVEL: Record<string, ReasoningEffort> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' };

/**
 * The thinking budgets each model family takes (Gemini thinking docs): a budget outside them is a 400, so the encoder
 * fits it. First match wins; `off`: whether 0 may turn thinking off (Pro models cannot).
 */
export const BUDGET_RANGE: Array<{ model: RegExp; off: boolean; min: number; max: number }> = [
  { model: /flash-lite/, off: true, min: 512, max: 24576 },
  { model: /flash/, off: true, min: 1, max: 24576 },
  { model: /pro/, off: false, min: 128, max: 32768 },
  { model: /(?:)/, off: true, min: 1, max: 32768 },
];
