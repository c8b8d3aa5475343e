// Shared bits of the SDK end-to-end tests: the shipped config, per-request ids, and reading the gateway's request log.
import { fileURLToPath } from 'node:url';
import type { LoggedRequest } from './gateway.ts';

/** The shipped gateway.yaml, as `npm start` serves it. */
export const SHIPPED_CONFIG = fileURLToPath(new URL('../../gateway.yaml', import.meta.url));

export const DEMO_KEY = 'sk-demo-key';

/** The credentials of the shipped demo group's three simulator accounts. */
export const DEMO_ACCOUNT = /^demo-upstream-credential(-2|-3)?$/;

let counter = 0;
/** A fresh well-formed client request id: the gateway logs and records it (client_request_id), so a test finds its own request. */
export const rid = (label: string): string => `e2e-${label}-${process.pid}-${++counter}`;

/**
 * The log line of one request, by the gateway's id or the client's own; it is written when the request ends, which can be
 * just after the client saw the end.
 */
export async function logLine(requests: LoggedRequest[], reqId: string, timeoutMs = 3000): Promise<LoggedRequest> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = requests.find((r) => r.req_id === reqId || r.client_request_id === reqId);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no log line for request ${reqId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Canonical usage as the gateway logs it. */
export const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0, reasoning = 0) =>
  ({ input, cacheRead, cacheWrite, output, reasoning });

/** What a promise rejected with, or a failure when it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** Every string a recorded upstream request exposes: path with query, raw body, and each header value. */
export function surfaces(r: { path: string; body: string; headers: Record<string, string | string[] | undefined> }): string[] {
  return [r.path, r.body, ...Object.entries(r.headers).flatMap(([name, value]) => [name, ...(Array.isArray(value) ? value : [value ?? ''])])];
}

/**
 * The credential a recorded upstream request carried, in whichever vendor header it went (a model-list ask uses the
 * vendor's own: Bearer for OpenAI, x-api-key for Anthropic, x-goog-api-key for Gemini), and how many such headers it had.
 */
export function sentCredential(r: { headers: Record<string, string | string[] | undefined> }): { credential?: string; headers: number } {
  const sent = [r.headers.authorization, r.headers['x-api-key'], r.headers['x-goog-api-key']].filter((v): v is string => typeof v === 'string');
  return { credential: sent[0]?.replace(/^Bearer /, ''), headers: sent.length };
}
