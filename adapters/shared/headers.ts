// What crosses the gateway besides the body: the request headers and query parameters a client may send upstream, and the
// upstream response headers that reach it. Allow lists, per format: anything not named here is dropped.
/** Request headers every format passes: the body's type, what the client accepts, and what its SDK says of itself. */
export const REQUEST_HEADERS = ['content-type', 'accept', 'user-agent', 'x-stainless-*', 'idempotency-key'];

/** Response headers every format passes: the body's type and encoding, and the retry hints the official SDKs read. */
export const RESPONSE_HEADERS = ['content-type', 'content-encoding', 'cache-control', 'retry-after', 'retry-after-ms', 'x-should-retry'];

/**
 * The OpenAI family's own request headers: API betas, and the session and client ids Codex CLI sends. Never the
 * organization, project or ChatGPT account headers: those pick whose account pays, and an upstream refuses a
 * mismatch with 401.
 */
export const OPENAI_REQUEST_HEADERS = [
  ...REQUEST_HEADERS, 'openai-beta', 'session_id', 'session-id', 'conversation_id', 'thread-id', 'originator',
  'x-client-request-id', 'x-codex-*',
];

/** An OpenAI credential proves itself by listing models. */
export const OPENAI_CREDENTIAL_CHECK = { path: '/v1/models' };

/** Names (lower case) and prefixes (a trailing `*`) compiled into one test. */
export function headerMatcher(names: readonly string[]): (name: string) => boolean {
  const exact = new Set(names.filter((n) => !n.endsWith('*')).map((n) => n.toLowerCase()));
  const prefixes = names.filter((n) => n.endsWith('*')).map((n) => n.slice(0, -1).toLowerCase());
  if (!prefixes.length) return (name) => exact.has(name);
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p));
}
