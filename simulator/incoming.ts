// Reads what a request brings: its body, its JSON, and whether its credential is acceptable.
import type { IncomingMessage } from 'node:http';

/** Rejected like a missing key, so tests can exercise an upstream auth failure. */
export const BAD_CREDENTIAL = 'sim-bad-credential';
// Bodies past this are refused rather than buffered, so a runaway client cannot exhaust memory.
export const BODY_LIMIT = 64 * 1024 * 1024;

/** The body as text, or undefined when it exceeds BODY_LIMIT. */
export function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Keep draining past the limit so the client can still read the 413.
      if (size <= BODY_LIMIT) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= BODY_LIMIT ? Buffer.concat(chunks).toString('utf8') : undefined));
    // An aborted upload also closes the response, and the caller checks for that.
    req.on('error', () => resolve(''));
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

/** Why the request's credential is refused, or undefined when it is acceptable. */
export function credentialProblem(req: IncomingMessage): string | undefined {
  const bearer = /^Bearer\s+(.*)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
  const candidates = [bearer, req.headers['x-api-key'], req.headers['x-goog-api-key']]
    .map((value) => (Array.isArray(value) ? value[0] : value)?.trim())
    .filter((value): value is string => Boolean(value));
  if (candidates.length === 0) {
    return 'Missing credentials. Please pass an API key in the Authorization header (Bearer), x-api-key or x-goog-api-key.';
  }
  if (candidates.includes(BAD_CREDENTIAL)) return `Incorrect API key provided: ${BAD_CREDENTIAL}.`;
  return undefined;
}
