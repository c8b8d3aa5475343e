// The gateway's own format, for routes that are not a vendor API (admin API, pages): no model, no streams, a plain error envelope.
import type { GatewayError } from '../../core/errors.ts';
import type { FormatAdapter } from '../../core/types.ts';
import { noStream } from '../shared/no-stream.ts';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  405: 'invalid_request_error', 409: 'conflict_error', 413: 'invalid_request_error', 422: 'invalid_request_error',
  429: 'rate_limit_error', 503: 'unavailable_error',
};

const errorType = (status: number) => TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');

export const gatewayFormat: FormatAdapter = {
  name: 'gateway',
  platforms: [],
  upstreamAuth: 'bearer',
  model: { read: async () => undefined },
  // Nothing on these routes reaches an upstream.
  jsonBody: false,
  forwardHeaders: [],
  returnHeaders: [],
  forwardQuery: [],
  isStream: () => false,
  usageFromBody: () => undefined,
  scanStream: () => noStream,
  setModel: () => {},
  errorBody: (err: GatewayError) => ({ error: { code: err.code, message: err.message, type: errorType(err.status) } }),
  // Never streamed; should a stage fail after writing, the body ends with the same JSON error.
  streamError: (err: GatewayError) => JSON.stringify({ error: { code: err.code, message: err.message, type: errorType(err.status) } }),
  keepalive: null,
};
