// Error envelopes the simulator answers with, one shape per wire dialect (wire-formats §1.5).
import type { ServerResponse } from 'node:http';

export type Dialect = 'openai';

export interface ErrorSpec {
  status: number;
  message: string;
  /** Defaults from the status when omitted. */
  type?: string;
  code?: string | null;
  param?: string | null;
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
