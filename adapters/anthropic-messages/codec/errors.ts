// Errors both ways: a canonical error in Anthropic's envelope for a client, and an Anthropic upstream's error read back.
import type { CanonError } from '../../../core/canonical.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { errorType } from '../errors.ts';
import { isObj } from './check.ts';
import { KIND_FROM_TYPE, kindOfStatus, STATUS_BY_KIND } from './tables.ts';

/** The `error` object of the envelope and of a stream's error event: the type follows the kind. */
export const errorObject = (err: CanonError) => ({ type: errorType(STATUS_BY_KIND[err.kind]), message: err.message });

export function encodeError(err: CanonError): { status: number; body: unknown; headers?: Record<string, string> } {
  // Overloaded is 529 on Anthropic whatever the upstream said (a Gemini 503 UNAVAILABLE); the SDK retries it.
  const status = err.kind === 'overloaded' ? 529 : err.status;
  return {
    status,
    body: { type: 'error', error: errorObject(err) },
    ...(err.retryAfter ? { headers: { 'retry-after': err.retryAfter } } : {}),
  };
}

/** An upstream's error body (or its stream's error event's `error`), read by type; a body that is not Anthropic's by status. */
export function decodeError(status: number, body: string): CanonError {
  const error = parseObject(body)?.error;
  return errorFromWire(status, error, body);
}

/** An Anthropic error object as canonical; `status` is unknown for a stream's error event (then the kind's own). */
export function errorFromWire(status: number | undefined, error: unknown, raw = ''): CanonError {
  const wire = isObj(error) ? error : {};
  const type = typeof wire.type === 'string' ? wire.type : undefined;
  const kind = (type && KIND_FROM_TYPE[type]) || (status === undefined ? 'server' : kindOfStatus(status));
  const message = typeof wire.message === 'string' && wire.message !== ''
    ? wire.message
    : raw.trim().slice(0, 500) || `The upstream failed (${status === undefined ? 'in its stream' : `HTTP ${status}`})`;
  // A spend-limit 429 names itself in details.error_code (docs/wire-formats.md#anthropic-errors): retrying it is pointless.
  const code = isObj(wire.details) && typeof wire.details.error_code === 'string' ? wire.details.error_code : type;
  return { status: status ?? STATUS_BY_KIND[kind], kind, message, ...(code ? { code } : {}) };
}
