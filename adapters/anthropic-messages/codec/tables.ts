// The Anthropic Messages codec's tables: stop reasons and error kinds both ways, and the reasoning effort → thinking budget scale.
import type { ErrorKind, ReasoningEffort, StopReason } from '../../../core/canonical.ts';

/** This codec's format name: the tag on the signatures it makes and the key of its extras. */
export const FORMAT = 'anthropic-messages';

/** The API version every upstream request names (docs/wire-formats.md#anthropic-headers). */
export const API_VERSION = '2023-06-01';

/** Anthropic stop_reason → canonical. model_context_window_exceeded is an output cap too (docs/wire-formats.md#stop-reasons). */
export const STOP_FROM_WIRE: Record<string, StopReason> = {
  end_turn: 'end', stop_sequence: 'stop_sequence', max_tokens: 'max_tokens', model_context_window_exceeded: 'max_tokens',
  tool_use: 'tool_use', refusal: 'content_filter', pause_turn: 'pause',
};

export const STOP_TO_WIRE: Record<StopReason, string> = {
  end: 'end_turn', stop_sequence: 'stop_sequence', max_tokens: 'max_tokens', tool_use: 'tool_use',
  content_filter: 'refusal', pause: 'pause_turn',
};

/** Anthropic error.type → canonical kind (timeout_error is what the API sends for 504). */
export const KIND_FROM_TYPE: Record<string, ErrorKind> = {
  invalid_request_error: 'invalid_request', authentication_error: 'authentication', billing_error: 'billing',
  permission_error: 'permission', not_found_error: 'not_found', request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limit', api_error: 'server', overloaded_error: 'overloaded', timeout_error: 'timeout',
};

/** The status Anthropic answers each kind with: its error type follows from it (../errors.ts). */
export const STATUS_BY_KIND: Record<ErrorKind, number> = {
  invalid_request: 400, authentication: 401, billing: 402, permission: 403, not_found: 404, request_too_large: 413,
  rate_limit: 429, server: 500, overloaded: 529, timeout: 504,
};

/** A status without a readable error body → kind (an upstream proxy's HTML page, a cut connection). */
export function kindOfStatus(status: number): ErrorKind {
  for (const [kind, s] of Object.entries(STATUS_BY_KIND) as [ErrorKind, number][]) if (s === status) return kind;
  if (status === 503) return 'overloaded';
  if (status === 408) return 'timeout';
  return status >= 500 ? 'server' : 'invalid_request';
}

/** docs/translation.md "Reasoning": the thinking budget for an effort. */
export const BUDGET_BY_EFFORT: Record<Exclude<ReasoningEffort, 'none'>, number> = {
  minimal: 1024, low: 1024, medium: 4096, high: 10240, xhigh: 32768, max: 32768,
};

/** Anthropic's smallest thinking budget. */
export const MIN_BUDGET = 1024;

