// Anthropic's error types by HTTP status (docs/wire-formats.md#anthropic-errors): the adapter's error envelopes and the codec's both use this one table.
export const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error',
  404: 'not_found_error', 408: 'timeout_error', 413: 'request_too_large', 429: 'rate_limit_error',
  500: 'api_error', 502: 'api_error', 503: 'overloaded_error', 504: 'timeout_error', 529: 'overloaded_error',
};

/** The error type for a status, with the API's own fallbacks for statuses it does not list. */
export const errorType = (status: number): string =>
  TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
