// Error envelopes the simulator answers with, one shape per wire dialect (docs/wire-formats.md#openai-errors, #anthropic-errors, #gemini-errors).
import type { ServerResponse } from 'node:http';

export type Dialect = 'openai' | 'anthropic' | 'gemini';

export interface ErrorSpec {
  status: number;
  message: string;
  /** The error's kind in the dialect: OpenAI `error.type`, Anthropic `error.type`, Gemini `error.status`. Defaults from the status. */
  type?: string;
  /** OpenAI only. */
  code?: string | null;
  /** OpenAI only. */
  param?: string | null;
  /** Gemini only: google.rpc details such as BadRequest field violations. */
  details?: unknown[];
  headers?: Record<string, string>;
}

interface TypeAndCode { type: string; code: string | null }

// How the real OpenAI API pairs statuses with error types and codes.
const openaiByStatus: Record<number, TypeAndCode> = {
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

function openaiDefaults(status: number): TypeAndCode {
  return openaiByStatus[status] ?? (status >= 500
    ? { type: 'server_error', code: null }
    : { type: 'invalid_request_error', code: null });
}

// Anthropic's documented status → error.type pairs; unlisted 4xx are invalid_request_error, unlisted 5xx api_error.
const anthropicByStatus: Record<number, string> = {
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

// Google's canonical HTTP → RPC status names; Google itself answers UNKNOWN for the rest.
const geminiByStatus: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const envelopes: Record<Dialect, (e: ErrorSpec) => unknown> = {
  openai: (e) => {
    const defaults = openaiDefaults(e.status);
    return {
      error: {
        message: e.message,
        type: e.type ?? defaults.type,
        param: e.param ?? null,
        code: e.code === undefined ? defaults.code : e.code,
      },
    };
  },
  anthropic: (e) => ({
    type: 'error',
    error: { type: e.type ?? anthropicByStatus[e.status] ?? (e.status >= 500 ? 'api_error' : 'invalid_request_error'), message: e.message },
  }),
  gemini: (e) => ({
    error: { code: e.status, message: e.message, status: e.type ?? geminiByStatus[e.status] ?? 'UNKNOWN', ...(e.details ? { details: e.details } : {}) },
  }),
};

export function errorBody(dialect: Dialect, spec: ErrorSpec): unknown {
  return envelopes[dialect](spec);
}

export function sendError(res: ServerResponse, dialect: Dialect, spec: ErrorSpec): void {
  // Too late for a status line: cutting the connection is the only honest signal left.
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(dialect, spec));
  res.writeHead(spec.status, { ...spec.headers, 'content-type': 'application/json' });
  res.end(body);
}
