// The one error type stages throw, and the one place that renders it in the route's native envelope.
import type { ServerResponse } from 'node:http';
import { sendJson } from './reply.ts';

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

/** What a throw site adds to a catalogued error: the offending field, headers, a status other than the usual one. */
export interface ErrorExtra { param?: string; headers?: Record<string, string>; status?: number }

/**
 * One code of the catalogue: its usual status (and any other it may take), what it means (docs/errors.md's table is
 * generated from this), and its message — fixed, or made from the throw site's parameters — and headers, likewise.
 * Codes are snake_case; `wire` is the code clients have always seen for one named before that rule (API_KEY_REQUIRED):
 * they keep seeing it.
 */
export interface ErrorEntry<P = never> {
  status: number;
  also?: number[];
  doc: string;
  message: string | ((p: P) => string);
  headers?: Record<string, string> | ((p: P) => Record<string, string>);
  wire?: string;
}

/** The one case style of a code (most of the catalogue's, and what most clients' SDKs expect): lower snake_case. */
const CODE_STYLE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

type Thrower<E> = E extends { message: (p: infer P) => string } ? (p: P, extra?: ErrorExtra) => GatewayError
  : E extends { headers: (p: infer P) => Record<string, string> } ? (p: P, extra?: ErrorExtra) => GatewayError
  : (p?: undefined, extra?: ErrorExtra) => GatewayError;
export type ErrorsOf<T> = { [K in keyof T]: Thrower<T[K]> };

/** Every code the gateway answers with (as clients see it), by the area that raises it (core, a plugin, an adapter). */
const catalogue = new Map<string, { area: string; entry: ErrorEntry<any> }>();

/**
 * Registers an area's error table (in the manner of Fastify's lib/errors.js) and returns one thrower per code:
 * `throw authErrors.invalid_api_key()`. A code belongs to one area and is snake_case; either broken is a bug caught
 * at load.
 */
export function defineErrors<const T extends Record<string, ErrorEntry<any>>>(area: string, table: T): ErrorsOf<T> {
  const out: Record<string, (p?: unknown, extra?: ErrorExtra) => GatewayError> = {};
  for (const [name, entry] of Object.entries(table)) {
    if (!CODE_STYLE.test(name)) throw new Error(`error code ${name} of ${area} is not snake_case (an older code clients know goes in wire)`);
    const code = entry.wire ?? name;
    const known = catalogue.get(code);
    if (known && known.entry !== entry) throw new Error(`error code ${code} is defined by both ${known.area} and ${area}`);
    catalogue.set(code, { area, entry });
    const headers = entry.headers;
    out[name] = (p, extra = {}) => new GatewayError(extra.status ?? entry.status, code,
      typeof entry.message === 'string' ? entry.message : entry.message(p as never),
      { headers: { ...(typeof headers === 'function' ? headers(p as never) : headers), ...extra.headers }, param: extra.param });
  }
  return out as ErrorsOf<T>;
}

/** The whole catalogue, code by code as clients see it (scripts/error-reference.ts writes docs/errors.md's table from it). */
export const errorCatalogue = (): ReadonlyMap<string, { area: string; entry: ErrorEntry<any> }> => catalogue;

/** What is wrong with a request body that parsed (an invalid_body), and how each reads. */
type BodyProblem = { kind: 'not_an_object' } | { kind: 'too_deep'; max: number } | { kind: 'duplicate'; name: string } | { kind: 'invalid'; detail: string };
const bodyProblems: { [K in BodyProblem['kind']]: (p: Extract<BodyProblem, { kind: K }>) => string } = {
  not_an_object: () => 'Request body must be a JSON object',
  too_deep: (p) => `Request body nests objects and arrays more than ${p.max} levels deep`,
  duplicate: (p) => `Request body names the field "${p.name}" more than once`,
  invalid: (p) => `Invalid request body: ${p.detail}`,
};

/** Status classes used by adapters to pick their native error type names. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

/** Errors the core itself raises, by code. */
export const coreErrors = defineErrors('core', {
  route_not_found: { status: 404, doc: 'No route matches the method and path.', message: (path: string) => `No route for ${path}` },
  method_not_allowed: {
    status: 405, doc: 'The path exists for other methods (listed in `allow`).',
    message: (p: { method: string; allowed: string[] }) => `Method ${p.method} is not allowed here; use ${p.allowed.join(', ')}`,
    headers: (p: { method: string; allowed: string[] }) => ({ allow: p.allowed.join(', ') }),
  },
  invalid_path: {
    status: 400, doc: 'A path parameter holds an encoded `/`, `?`, `#` or `\\`, a dot segment or a control character.',
    message: (name: string) => `The path segment "${name}" holds a character or segment that is not allowed (an encoded "/", "?", "#" or "\\", a control character, an empty, "." or ".." segment)`,
  },
  bad_url: { status: 400, doc: 'The request URL cannot be parsed.', message: 'Malformed request URL' },
  absolute_url: {
    status: 400, doc: 'The request line names a full URL (absolute-form, as sent to a proxy) instead of a path.',
    message: 'The request target must be a path such as /v1/chat/completions, not a full URL: the gateway is not a proxy',
  },
  connect_not_supported: { status: 405, doc: 'A CONNECT request: the gateway is not a proxy.', message: 'CONNECT is not supported: the gateway is not a proxy' },
  missing_host: { status: 400, doc: 'An HTTP/1.1 request without a `Host` header.', message: 'An HTTP/1.1 request must carry a Host header' },
  expectation_failed: { status: 417, doc: 'The `Expect` header asks for something other than `100-continue`.', message: 'The only expectation supported is "Expect: 100-continue"' },
  request_too_large: { status: 413, doc: 'The body exceeds `server.body_limit`.', message: (limit: number) => `Request body exceeds the limit of ${limit} bytes` },
  invalid_json: { status: 400, doc: 'The body is not valid JSON.', message: (detail: string) => `Request body is not valid JSON: ${detail}` },
  invalid_body: {
    status: 400, doc: 'The body is not the JSON object the route takes (wrong shape, nesting deeper than 400 levels, a field named twice in the top-level object or an object directly in it).',
    message: (problem: BodyProblem) => (bodyProblems[problem.kind] as (p: BodyProblem) => string)(problem),
  },
  request_aborted: { status: 400, doc: 'The client stopped sending its body.', message: 'The request body was not fully received' },
  headers_too_large: { status: 431, doc: 'The request headers are too large (answered in the route\'s format when its request line can be read).', message: 'The request headers are too large' },
  request_timeout: { status: 408, doc: 'The request was not received within `server.request_timeout_ms`.', message: 'The request was not received in time' },
  malformed_request: { status: 400, doc: 'What arrived is not valid HTTP.', message: 'The request is not valid HTTP' },
  no_response: { status: 500, doc: 'A route\'s stages finished without answering (a configuration error).', message: 'The route finished without answering' },
  internal_error: { status: 500, doc: 'An unexpected failure inside the gateway (logged with the request id).', message: 'The gateway failed to handle this request' },
});

/** What renders an error in a format's own envelopes (a FormatAdapter): C is what a stream's error event reads of its request. */
export interface ErrorRenderer<C = unknown> {
  errorBody(err: GatewayError, ctx: { id: string }): unknown;
  /** The format's own in-stream error event; the request's context holds what its scanner saw (ids, sequence numbers). */
  streamError(err: GatewayError, ctx?: C): string;
}

/** Envelope for errors that happen before a route (and so a format) is known. */
function neutralBody(err: GatewayError, id: string) {
  return { error: { message: err.message, type: err.status === 404 ? 'not_found_error' : 'invalid_request_error', code: err.code, request_id: id } };
}

/** The client stopped sending its request body: it never made a whole request. */
export const isBodyAborted = (err: unknown): boolean => err instanceof GatewayError && err.code === 'request_aborted';

export function asGatewayError(err: unknown): GatewayError {
  return err instanceof GatewayError ? err : coreErrors.internal_error();
}

/** Render an error as JSON, in the format's envelope when a format is known. */
export function sendError<C>(res: ServerResponse, err: GatewayError, id: string, format?: ErrorRenderer<C>, ctx?: C): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end(format ? format.streamError(err, ctx) : undefined);
    return;
  }
  sendJson(res, err.status, format ? format.errorBody(err, { id }) : neutralBody(err, id), { ...err.headers, 'x-request-id': id });
}
