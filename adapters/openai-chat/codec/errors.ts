// Errors both ways in OpenAI's envelope {error:{message,type,param,code}}: a canonical error → what a chat client gets
// (status and type from the table, retry-after kept), and a chat upstream's error body (or in-stream error) → canonical.
import type { CanonError, ErrorKind } from '../../../core/canonical.ts';
import { isObj, type Obj } from './checks.ts';
import { ERROR_OUT, KIND_BY_STATUS, KIND_BY_TYPE } from './tables.ts';
import { OPENAI_STATUS_BY_KIND as STATUS_BY_KIND } from '../../shared/openai-family.ts';

/** Upstream error text kept in a message: enough to read, never a whole page of it. */
const MAX_MESSAGE = 2000;

export function chatErrorObject(err: CanonError): Obj {
  const out = ERROR_OUT[err.kind] ?? ERROR_OUT.server;
  return { message: err.message, type: out.type, param: null, code: err.code ?? out.code };
}

export function encodeError(err: CanonError): { status: number; body: unknown; headers?: Record<string, string> } {
  const out = ERROR_OUT[err.kind] ?? ERROR_OUT.server;
  // A 400 keeps the upstream's own status class; every other kind answers with the status OpenAI uses for it.
  const status = err.kind === 'invalid_request' && err.status >= 400 && err.status < 500 ? err.status : out.status;
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['retry-after'] = err.retryAfter;
  // Out of credit: a retry cannot help, and OpenAI's SDKs would retry a 429.
  if (err.kind === 'billing') headers['x-should-retry'] = 'false';
  return { status, body: { error: chatErrorObject(err) }, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
}

const kindOfStatus = (status: number): ErrorKind => KIND_BY_STATUS[status] ?? (status >= 500 ? 'server' : 'invalid_request');

/** An OpenAI error object (a body's `error`, or a stream's `data: {"error":…}`) → canonical; `status` 0 when none came. */
export function errorFromObject(error: unknown, status: number): CanonError {
  const e = isObj(error) ? error : {};
  const code = typeof e.code === 'string' ? e.code : undefined;
  const type = typeof e.type === 'string' ? e.type : undefined;
  const byType = (code && KIND_BY_TYPE[code]) || (type && KIND_BY_TYPE[type]) || undefined;
  // A quota error keeps its own kind whatever the status; otherwise the status decides when there is one.
  const kind: ErrorKind = byType === 'billing' ? 'billing' : status > 0 ? kindOfStatus(status) : byType ?? 'server';
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : typeof error === 'string' ? error : 'The upstream reported an error';
  return { status: status > 0 ? status : STATUS_BY_KIND[kind], kind, message: message.slice(0, MAX_MESSAGE), ...(code ? { code } : {}) };
}

export function decodeError(status: number, body: string): CanonError {
  let json: unknown;
  try { json = JSON.parse(body); } catch { json = undefined; }
  if (isObj(json) && json.error !== undefined) return errorFromObject(json.error, status);
  const text = body.trim();
  return errorFromObject({ message: text === '' ? `The upstream answered with HTTP ${status}` : text }, status);
}
