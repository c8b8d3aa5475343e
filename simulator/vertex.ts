// The simulator playing kind `vertex`: Vertex AI's publisher paths mapped onto the Gemini and Anthropic routes, a bearer
// its own token endpoint issued (refused once expired with Google's 401), that endpoint verifying each service-account
// JWT with the key's public key (trusted beforehand, as Google knows the keys it made), and Claude bodies checked as
// Vertex checks them: no `model`, anthropic_version vertex-2023-10-16.
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dialect } from './errors.ts';

export const VERTEX_TOKEN_PATH = '/token';
const ANTHROPIC_VERSION = 'vertex-2023-10-16';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google's longest assertion, and the clock skew it forgives. */
const MAX_ASSERTION_S = 3600;
const SKEW_S = 300;

const PUBLISHER_PATH = /^\/v1(?:beta1)?\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const googleError = (res: ServerResponse, status: number, rpc: string, message: string) => json(res, status, { error: { code: status, message, status: rpc } });
const anthropicError = (res: ServerResponse, message: string) => json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
const grantError = (res: ServerResponse, status: number, error: string, description: string) => json(res, status, { error, error_description: description });

/** Where a Vertex path goes among the simulator's routes, and in which dialect it answers (before the body is read). */
export function vertexRoute(path: string): { path: string; dialect: Dialect } | undefined {
  const m = PUBLISHER_PATH.exec(path);
  if (!m) return undefined;
  const [, , , publisher, model, method] = m;
  if (publisher === 'google') return { path: `/v1beta/models/${model}:${method}`, dialect: 'gemini' };
  if (method !== 'rawPredict' && method !== 'streamRawPredict') return undefined;
  return { path: model === 'count-tokens' ? '/v1/messages/count_tokens' : '/v1/messages', dialect: 'anthropic' };
}

export interface VertexRequest { path: string; credential: string; body?: string }

export class VertexSimulator {
  readonly #ttlMs: number;
  readonly #tokens = new Map<string, number>();
  /** Public keys of the service accounts it knows, by client_email. */
  readonly #keys = new Map<string, KeyObject>();
  /** Tokens issued so far (a test counts refreshes). */
  issued = 0;

  constructor(ttlMs = 3_600_000) { this.#ttlMs = Math.max(1000, ttlMs); }

  /** Trusts a service account's key: its JWTs verify with this public key (PEM). */
  trust(clientEmail: string, publicKey: string | KeyObject): void {
    this.#keys.set(clientEmail, typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey);
  }

  /** Google's token endpoint: a jwt-bearer assertion signed by a trusted key, for its own URL, short-lived, with the scope. */
  token(req: IncomingMessage, res: ServerResponse, method: string, path: string, body: string): void {
    if (method !== 'POST') return grantError(res, 405, 'invalid_request', 'POST only');
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== JWT_BEARER) return grantError(res, 400, 'unsupported_grant_type', 'Invalid grant_type');
    const refusal = this.#refusal(req, path, form.get('assertion') ?? '');
    if (refusal) return grantError(res, 400, 'invalid_grant', refusal);
    const token = `ya29.sim_${randomBytes(16).toString('hex')}`;
    const now = Date.now();
    for (const [t, until] of this.#tokens) if (until < now) this.#tokens.delete(t);
    this.#tokens.set(token, now + this.#ttlMs);
    this.issued++;
    json(res, 200, { access_token: token, expires_in: Math.floor(this.#ttlMs / 1000), token_type: 'Bearer' });
  }

  #refusal(req: IncomingMessage, path: string, jwt: string): string | undefined {
    const parts = jwt.split('.');
    if (parts.length !== 3) return 'Invalid JWT: not a JWT';
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return 'Invalid JWT: malformed';
    }
    if (header.alg !== 'RS256') return 'Invalid JWT: alg must be RS256';
    const key = typeof claims.iss === 'string' ? this.#keys.get(claims.iss) : undefined;
    if (!key) return 'Invalid grant: account not found';
    if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url'))) return 'Invalid JWT Signature.';
    let aud: URL | undefined;
    try { aud = new URL(String(claims.aud)); } catch { /* said below */ }
    if (!aud || aud.pathname !== path || aud.host !== req.headers.host) return 'Invalid JWT: aud is not this token endpoint';
    const now = Math.floor(Date.now() / 1000);
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    if (!Number.isFinite(iat) || !Number.isFinite(exp) || exp <= now || iat > now + SKEW_S || exp - iat > MAX_ASSERTION_S) {
      return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';
    }
    if (!String(claims.scope ?? '').split(' ').includes(SCOPE)) return 'Invalid OAuth scope or ID token audience provided.';
    return undefined;
  }

  /**
   * A Vertex request checked (the bearer, a Claude body) and mapped onto the route it plays, with the body that route
   * takes; undefined once it was answered (a refusal, or the token endpoint).
   */
  accept(req: IncomingMessage, res: ServerResponse, method: string, path: string, body: string, parsed: unknown): VertexRequest | undefined {
    if (path === VERTEX_TOKEN_PATH) { this.token(req, res, method, path, body); return undefined; }
    const m = PUBLISHER_PATH.exec(path);
    const route = vertexRoute(path);
    if (!m || !route) { googleError(res, 404, 'NOT_FOUND', `The requested URL ${path} was not found on this server.`); return undefined; }
    const credential = this.#credential(req, res);
    if (credential === undefined) return undefined;
    if (route.dialect === 'gemini') return { path: route.path, credential };
    const [, , , , model, call] = m;
    const b = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...(parsed as Record<string, unknown>) } : undefined;
    if (!b) { anthropicError(res, 'The request body is not valid JSON.'); return undefined; }
    const count = model === 'count-tokens';
    if (count ? typeof b.model !== 'string' || !b.model : b.model !== undefined) {
      anthropicError(res, count ? 'model: Field required' : 'model: Extra inputs are not permitted');
      return undefined;
    }
    if (b.anthropic_version === undefined ? !count : b.anthropic_version !== ANTHROPIC_VERSION) {
      anthropicError(res, b.anthropic_version === undefined ? 'anthropic_version: Field required' : `anthropic_version: Input should be '${ANTHROPIC_VERSION}'`);
      return undefined;
    }
    delete b.anthropic_version;
    if (!count) b.model = decodeURIComponent(model);
    if (call === 'streamRawPredict') b.stream = true;
    // Vertex takes the version in the body: the Messages routes' header rule is met for it.
    req.headers['anthropic-version'] ??= '2023-06-01';
    return { path: route.path, credential, body: JSON.stringify(b) };
  }

  #credential(req: IncomingMessage, res: ServerResponse): string | undefined {
    const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1]?.trim();
    const until = bearer === undefined ? undefined : this.#tokens.get(bearer);
    if (bearer !== undefined && until !== undefined && until > Date.now()) return bearer;
    googleError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.');
    return undefined;
  }
}
