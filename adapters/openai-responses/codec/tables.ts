// The Responses format's tables: stop reasons both ways, error kinds both ways, reasoning effort, and the tools and
// items that only OpenAI can run (refused when translating).
import type { ErrorKind, ReasoningEffort, StopReason } from '../../../core/canonical.ts';

export const FORMAT = 'openai-responses';

/** Canonical stop → the Response's status and incomplete_details. */
export const STATUS_BY_STOP: Record<StopReason, { status: 'completed' | 'incomplete'; reason?: 'max_output_tokens' | 'content_filter' }> = {
  end: { status: 'completed' },
  stop_sequence: { status: 'completed' },
  tool_use: { status: 'completed' },
  pause: { status: 'completed' },
  max_tokens: { status: 'incomplete', reason: 'max_output_tokens' },
  content_filter: { status: 'incomplete', reason: 'content_filter' },
};

/** incomplete_details.reason → canonical stop (an unknown reason is a cut answer). */
export const STOP_BY_INCOMPLETE: Record<string, StopReason> = {
  max_output_tokens: 'max_tokens',
  content_filter: 'content_filter',
};

/** What a completed answer's stop is: a call wins, then a refusal, else a natural end. */
export function stopOfCompleted(hasCall: boolean, refused: boolean): StopReason {
  return hasCall ? 'tool_use' : refused ? 'content_filter' : 'end';
}

/** Each error kind as an OpenAI client sees it: status and default code (docs/wire-formats.md#openai-errors; docs/translation.md, Errors). */
export const ERROR_BY_KIND: Record<ErrorKind, { status: number; code: string | null }> = {
  invalid_request: { status: 400, code: null },
  authentication: { status: 401, code: 'invalid_api_key' },
  permission: { status: 403, code: null },
  not_found: { status: 404, code: 'not_found' },
  request_too_large: { status: 413, code: 'request_too_large' },
  rate_limit: { status: 429, code: 'rate_limit_exceeded' },
  billing: { status: 429, code: 'insufficient_quota' },
  server: { status: 500, code: 'server_error' },
  overloaded: { status: 503, code: 'server_is_overloaded' },
  timeout: { status: 504, code: 'timeout' },
};

/** An upstream HTTP status → error kind (codes below refine it). */
export const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: 'invalid_request', 401: 'authentication', 402: 'billing', 403: 'permission', 404: 'not_found', 408: 'timeout',
  409: 'invalid_request', 413: 'request_too_large', 422: 'invalid_request', 429: 'rate_limit', 500: 'server',
  502: 'server', 503: 'overloaded', 504: 'timeout', 529: 'overloaded',
};

/**
 * OpenAI error codes (HTTP bodies, `error` events, response.failed) that say more than the status. A generic
 * server_error is not one: a 503 with it is still an overload, and a stream error without a known code is a server one.
 */
export const KIND_BY_CODE: Record<string, ErrorKind> = {
  insufficient_quota: 'billing',
  rate_limit_exceeded: 'rate_limit',
  too_many_requests: 'rate_limit',
  server_is_overloaded: 'overloaded',
  invalid_prompt: 'invalid_request',
  context_length_exceeded: 'invalid_request',
  invalid_api_key: 'authentication',
  model_not_found: 'not_found',
  timeout: 'timeout',
};

export const EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/** Canonical effort → what the Responses API takes (it has no `max`). */
export const UPSTREAM_EFFORT: Record<ReasoningEffort, string> = {
  none: 'none', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh',
};

/** A thinking budget (Anthropic, Gemini clients) → the nearest effort: the inverse of docs/translation.md's table. */
export function effortOfBudget(budget: number): ReasoningEffort | undefined {
  if (budget < 0) return undefined; // the provider's dynamic budget: leave the model's default
  if (budget < 4096) return 'low';
  if (budget < 10240) return 'medium';
  if (budget < 32768) return 'high';
  return 'xhigh';
}

/** Tool types that run inside OpenAI only: a translated request cannot have them. */
export const BUILTIN_TOOLS = new Set([
  'web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11', 'file_search',
  'code_interpreter', 'image_generation', 'local_shell', 'shell', 'mcp', 'computer_use_preview', 'computer_use',
  'apply_patch', 'namespace', 'tool_search',
]);

/** Input item types that replay a built-in tool's run: as meaningless to another provider as the tool itself. */
export const BUILTIN_ITEMS = new Set([
  'web_search_call', 'file_search_call', 'computer_call', 'computer_call_output', 'code_interpreter_call',
  'local_shell_call', 'local_shell_call_output', 'shell_call', 'shell_call_output', 'apply_patch_call',
  'apply_patch_call_output', 'mcp_call', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response',
  'compaction', 'tool_search_call', 'tool_search_output',
]);
