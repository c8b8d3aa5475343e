// Reads what a request brings: its body, its JSON, and whether its credential is acceptable.
import type { IncomingMessage } from 'node:http';
import type { Dialect, ErrorSpec } from './errors.ts';

/** Rejected like a missing key, so tests can exercise an upstream auth failure. */
export const BAD_CREDENTIAL = 'sim-bad-credential';
// Bodies past this are refused rather than buffered, so a runaway client cannot exhaust memory.
export const BODY_LIMIT = 64 * 1024 * 1024;

/** The body's bytes, or undefined when it exceeds BODY_LIMIT. */
export function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Keep draining past the limit so the client can still read the 413.
      if (size <= BODY_LIMIT) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= BODY_LIMIT ? Buffer.concat(chunks) : undefined));
    // An aborted upload also closes the response, and the caller checks for that.
    req.on('error', () => resolve(Buffer.alloc(0)));
  });
}

export function parseJson(body: string): { ok: true; value: unknown } | { ok: false } {
  if (body === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Google also takes the key in the query string (docs/wire-formats.md#auth-headers); the other vendors do not.
const queryKeyParam: Partial<Record<Dialect, string>> = { gemini: 'key' };

// Each vendor refuses a missing or wrong key with its own status and words.
const refusals: Record<Dialect, Record<'missing' | 'bad', ErrorSpec>> = {
  openai: {
    missing: { status: 401, code: 'invalid_api_key', message: 'Missing credentials. Please pass an API key in the Authorization header (Bearer), x-api-key or x-goog-api-key.' },
    bad: { status: 401, code: 'invalid_api_key', message: `Incorrect API key provided: ${BAD_CREDENTIAL}.` },
  },
  anthropic: {
    missing: { status: 401, message: 'x-api-key header is required' },
    bad: { status: 401, message: 'invalid x-api-key' },
  },
  gemini: {
    missing: { status: 403, message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API." },
    bad: { status: 400, message: 'API key not valid. Please pass a valid API key.' },
  },
};

/** The request's credential, or the dialect's refusal when it is missing or the bad one. */
export function readCredential(req: IncomingMessage, query: URLSearchParams, dialect: Dialect): { credential: string } | { refusal: ErrorSpec } {
  const bearer = /^Bearer\s+(.*)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
  const param = queryKeyParam[dialect];
  const candidates = [bearer, req.headers['x-api-key'], req.headers['x-goog-api-key'], param ? query.get(param) ?? undefined : undefined]
    .map((value) => (Array.isArray(value) ? value[0] : value)?.trim())
    .filter((value): value is string => Boolean(value));
  if (candidates.length === 0) return { refusal: refusals[dialect].missing };
  if (candidates.includes(BAD_CREDENTIAL)) return { refusal: refusals[dialect].bad };
  return { credential: candidates[0] };
}
