// Errors both ways: a canonical error in OpenAI's envelope (HTTP body, or the error of a response.failed), and an
// OpenAI upstream's error (HTTP body, `error` event, response.failed) as a canonical one. One table: tables.ts.
import type { CanonError, Codec, ErrorKind } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { openaiErrorObject } from '../../shared/openai-errors.ts';
import { isObj, type Obj } from './read.ts';
import { ERROR_BY_KIND, KIND_BY_CODE, KIND_BY_STATUS } from './tables.ts';
import { OPENAI_STATUS_BY_KIND as STATUS_BY_KIND } from '../../shared/openai-family.ts';

/** The code an OpenAI client gets: the error's own when it is one OpenAI uses (a client may act on it), else the kind's. */
const clientCode = (err: CanonError): string | null =>
  err.code !== undefined && Object.hasOwn(KIND_BY_CODE, err.code) ? err.code : ERROR_BY_KIND[err.kind].code;

export const encodeError: Codec['encodeError'] = (err) => {
  const { status } = ERROR_BY_KIND[err.kind];
  // The type comes from the status, as on the gateway's own errors; the code may be null, as OpenAI's often is.
  const body = { error: { ...openaiErrorObject(new GatewayError(status, '', err.message)), code: clientCode(err) } };
  return { status, body, ...(err.retryAfter !== undefined ? { headers: { 'retry-after': err.retryAfter } } : {}) };
};

/** The `error` of a response.failed: code and message (the SDK types the code as a string). */
export const failedError = (err: CanonError): { code: string; message: string } =>
  ({ code: clientCode(err) ?? 'invalid_prompt', message: err.message });

function kindOf(code: string | undefined, status: number | undefined): ErrorKind {
  if (code !== undefined && Object.hasOwn(KIND_BY_CODE, code)) return KIND_BY_CODE[code];
  if (status !== undefined) return KIND_BY_STATUS[status] ?? (status >= 500 ? 'server' : 'invalid_request');
  return 'server';
}

const stringOf = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export const decodeError: Codec['decodeError'] = (status, body) => {
  let parsed: unknown;
  try { parsed = JSON.parse(body); } catch { parsed = undefined; }
  const e: Obj = isObj(parsed) ? (isObj(parsed.error) ? parsed.error : parsed) : {};
  // Only the code refines the status: an HTTP error's type (invalid_request_error, server_error, tokens) is a class.
  const code = stringOf(e.code);
  const message = stringOf(e.message) ?? (body.trim().slice(0, 500) || `The upstream answered HTTP ${status}`);
  return { status, kind: kindOf(code, status), message, ...(code !== undefined ? { code } : {}) };
};

/** An upstream's mid-stream failure (an `error` event, fields at the top or nested, or response.failed's error); with no
 * status to go by, a nested error's type (too_many_requests) names its kind when its code does not. */
export function streamError(fields: Obj): CanonError {
  const code = stringOf(fields.code) ?? stringOf(fields.type);
  const kind = kindOf(code, undefined);
  return { status: STATUS_BY_KIND[kind], kind, message: stringOf(fields.message) ?? 'The upstream stream failed', ...(code !== undefined ? { code } : {}) };
}
