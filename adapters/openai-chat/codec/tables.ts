// The chat codec's tables: finish reasons, error kinds and reasoning budgets, each in one place and read both ways.
import type { ErrorKind, ReasoningEffort, StopReason } from '../../../core/canonical.ts';

export const FORMAT = 'openai-chat';

/** How a failed tool result (canonical isError) reads in chat, which has no field for it (docs/translation.md). */
export const TOOL_ERROR_PREFIX = '[tool error] ';

/** Canonical stop reason → chat finish_reason (chat has no stop-sequence or pause reason of its own: both are `stop`). */
export const FINISH_REASON: Record<StopReason, string> = {
  end: 'stop',
  stop_sequence: 'stop',
  pause: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
};

/** Chat finish_reason → canonical stop reason; anything unknown (a provider's own reason) ends the answer as `end`. */
export const STOP_REASON: Record<string, StopReason> = {
  stop: 'end',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filter',
};

/** How a chat client is told of each kind of error: the status OpenAI itself uses, its `type`, and a default code. */
export const ERROR_OUT: Record<ErrorKind, { status: number; type: string; code: string | null }> = {
  invalid_request: { status: 400, type: 'invalid_request_error', code: null },
  authentication: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key' },
  // OpenAI reports exhausted credit as a 429 insufficient_quota, which its SDKs know.
  billing: { status: 429, type: 'insufficient_quota', code: 'insufficient_quota' },
  permission: { status: 403, type: 'permission_error', code: null },
  not_found: { status: 404, type: 'invalid_request_error', code: null },
  request_too_large: { status: 413, type: 'invalid_request_error', code: null },
  rate_limit: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  server: { status: 500, type: 'server_error', code: null },
  // OpenAI's own overload answer is a 503 server_error.
  overloaded: { status: 503, type: 'server_error', code: null },
  timeout: { status: 504, type: 'timeout_error', code: null },
};

/** An upstream's HTTP status → kind (statuses not listed: invalid_request below 500, server from 500). */
export const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: 'invalid_request', 401: 'authentication', 402: 'billing', 403: 'permission', 404: 'not_found', 408: 'timeout',
  413: 'request_too_large', 422: 'invalid_request', 429: 'rate_limit', 500: 'server', 502: 'server', 503: 'overloaded',
  504: 'timeout', 529: 'overloaded',
};

/** Error `type`/`code` values that say more than the status (an in-stream error has no status at all). */
export const KIND_BY_TYPE: Record<string, ErrorKind> = {
  insufficient_quota: 'billing',
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  invalid_api_key: 'authentication',
  permission_error: 'permission',
  not_found_error: 'not_found',
  model_not_found: 'not_found',
  rate_limit_error: 'rate_limit',
  rate_limit_exceeded: 'rate_limit',
  tokens: 'rate_limit',
  requests: 'rate_limit',
  server_error: 'server',
  api_error: 'server',
  overloaded_error: 'overloaded',
  timeout_error: 'timeout',
};

/**
 * A token budget (Anthropic budget_tokens, Gemini thinkingBudget) → chat reasoning_effort: the smallest effort whose
 * budget (docs/translation.md: low 1024, medium 4096, high 10240) covers it. Capped at `high`: `xhigh` is sent only when a
 * client asked for it by name, since most chat models refuse it.
 */
export const EFFORT_BY_BUDGET: readonly [number, ReasoningEffort][] = [[1024, 'low'], [4096, 'medium'], [Infinity, 'high']];
