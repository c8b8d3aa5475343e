// Errors both ways: a canonical error in Google's envelope for a Gemini client (status name, ErrorInfo reason, RetryInfo
// that Gemini CLI waits by), and a Gemini upstream's error body or stream error frame read back as canonical.
import type { CanonError, ErrorKind } from '../../../core/canonical.ts';
import { parseObject } from '../../shared/stream-json.ts';
import { isObj } from './read.ts';
import { KIND_BY_HTTP, KIND_FROM_STATUS, WIRE_BY_KIND } from './tables.ts';

/** The status a Gemini client gets: the kind's own, except where an upstream's more precise 4xx/5xx of that kind fits. */
function statusOf(err: CanonError): number {
  const wire = WIRE_BY_KIND[err.kind];
  const sameClass = Math.floor(err.status / 100) === Math.floor(wire.status / 100);
  return (err.kind === 'invalid_request' || err.kind === 'server') && sameClass ? err.status : wire.status;
}

/** Google's `error` object, as the envelope and a stream's error frame carry it. */
export function errorObject(err: CanonError): Record<string, unknown> {
  const seconds = err.retryAfter !== undefined && /^\d+$/.test(err.retryAfter) ? err.retryAfter : undefined;
  const details = [
    ...(err.code ? [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: err.code, domain: 'gateway' }] : []),
    ...(seconds ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }] : []),
  ];
  return { code: statusOf(err), message: err.message, status: WIRE_BY_KIND[err.kind].name, ...(details.length > 0 ? { details } : {}) };
}

export function encodeError(err: CanonError): { status: number; body: unknown; headers?: Record<string, string> } {
  return {
    status: statusOf(err),
    body: { error: errorObject(err) },
    ...(err.retryAfter ? { headers: { 'retry-after': err.retryAfter } } : {}),
  };
}

export function decodeError(status: number, body: string): CanonError {
  return errorFromWire(status, parseObject(body)?.error, body);
}

/**
 * A Google error object as canonical; `status` is the HTTP status (for a stream's error frame, its `code`). A key Google
 * refuses comes as 400 INVALID_ARGUMENT with reason API_KEY_INVALID: that is the account's credential failing.
 */
export function errorFromWire(status: number | undefined, error: unknown, raw = ''): CanonError {
  const wire = isObj(error) ? error : {};
  const httpStatus = status ?? (typeof wire.code === 'number' ? wire.code : 500);
  const details = Array.isArray(wire.details) ? wire.details.filter(isObj) : [];
  const reason = details.find((d) => typeof d.reason === 'string')?.reason as string | undefined;
  const name = typeof wire.status === 'string' ? wire.status : undefined;
  let kind: ErrorKind = (name && KIND_FROM_STATUS[name]) || KIND_BY_HTTP[httpStatus] || (httpStatus >= 500 ? 'server' : 'invalid_request');
  if (reason === 'API_KEY_INVALID') kind = 'authentication';
  const delay = details.find((d) => typeof d.retryDelay === 'string')?.retryDelay as string | undefined;
  const seconds = delay === undefined ? undefined : /^(\d+)(?:\.\d+)?s$/.exec(delay)?.[1];
  const message = typeof wire.message === 'string' && wire.message !== ''
    ? wire.message
    : raw.trim().slice(0, 500) || `The upstream failed (HTTP ${httpStatus})`;
  return {
    status: kind === 'authentication' && httpStatus === 400 ? 401 : httpStatus, kind, message,
    ...(reason ?? name ? { code: reason ?? name } : {}),
    ...(seconds !== undefined ? { retryAfter: String(Math.max(1, Number(seconds))) } : {}),
  };
}
