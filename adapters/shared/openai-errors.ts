// OpenAI's error envelope {error:{message,type,param,code}}, shared by every OpenAI-family format.
import type { GatewayError } from '../../core/errors.ts';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'invalid_request_error', 403: 'permission_error', 404: 'invalid_request_error',
  405: 'invalid_request_error', 408: 'timeout_error', 409: 'invalid_request_error', 413: 'invalid_request_error',
  422: 'invalid_request_error', 429: 'rate_limit_error', 502: 'upstream_error', 503: 'server_error', 504: 'timeout_error',
};

export function openaiErrorObject(err: GatewayError) {
  const type = TYPE_BY_STATUS[err.status] ?? (err.status >= 500 ? 'server_error' : 'invalid_request_error');
  return { message: err.message, type, param: err.param, code: err.code };
}

export const openaiErrorBody = (err: GatewayError) => ({ error: openaiErrorObject(err) });
