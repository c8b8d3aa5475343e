// The one error type stages throw, and the one place that renders it in the route's native envelope.
import type { ServerResponse } from 'node:http';
import type { Ctx, FormatAdapter } from './types.ts';

export class GatewayError extends Error {
  status: number;
  code: string;
  headers: Record<string, string>;
  param: string | null;

  constructor(status: number, code: string, message: string, extra: { headers?: Record<string, string>; param?: string } = {}) {
    super(message);
    this.name = 'GatewayError';
    this.status = status;
    this.code = code;
    this.headers = extra.headers ?? {};
    this.param = extra.param ?? null;
  }
}

/** Status classes used by adapters to pick their native error type names. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

/** Errors the core itself raises, so their codes and statuses live in one catalogue. */
export const coreErrors = {
  notFound: (path: string) => new GatewayError(404, 'route_not_found', `No route for ${path}`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new GatewayError(405, 'method_not_allowed', `Method ${method} is not allowed here; use ${allowed.join(', ')}`,
      { headers: { allow: allowed.join(', ') } }),
  badPathParam: (name: string) =>
    new GatewayError(400, 'invalid_path', `The path segment "${name}" holds a character or segment that is not allowed (an encoded "/", "?", "#" or "\\", a control character, an empty, "." or ".." segment)`),
  bodyTooLarge: (limit: number) => new GatewayError(413, 'request_too_large', `Request body exceeds the limit of ${limit} bytes`),
  invalidJson: (detail: string) => new GatewayError(400, 'invalid_json', `Request body is not valid JSON: ${detail}`),
  tooDeep: (max: number) => new GatewayError(400, 'invalid_body', `Request body nests objects and arrays more than ${max} levels deep`),
  notAnObject: () => new GatewayError(400, 'invalid_body', 'Request body must be a JSON object'),
  bodyAborted: () => new GatewayError(400, 'request_aborted', 'The request body was not fully received'),
  internal: () => new GatewayError(500, 'internal_error', 'The gateway failed to handle this request'),
};

/** Envelope for errors that happen before a route (and so a format) is known. */
function neutralBody(err: GatewayError, id: string) {
  return { error: { message: err.message, type: err.status === 404 ? 'not_found_error' : 'invalid_request_error', code: err.code, request_id: id } };
}

/** The client stopped sending its request body: it never made a whole request. */
export const isBodyAborted = (err: unknown): boolean => err instanceof GatewayError && err.code === 'request_aborted';

export function asGatewayError(err: unknown): GatewayError {
  return err instanceof GatewayError ? err : coreErrors.internal();
}

/** Render an error as JSON, in the format's envelope when a format is known. */
export function sendError(res: ServerResponse, err: GatewayError, id: string, format?: FormatAdapter, ctx?: Pick<Ctx, 'get'>): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end(format ? format.streamError(err, ctx) : undefined);
    return;
  }
  const body = JSON.stringify(format ? format.errorBody(err, { id }) : neutralBody(err, id));
  res.writeHead(err.status, {
    ...err.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': id,
  });
  res.end(body);
}
