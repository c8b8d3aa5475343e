// OAuth 2 credential sources (RFC 6749): client credentials (Azure Entra ID and any provider) and a refresh token, each
// exchanged at a token URL for a bearer access token. Errors say the status and the OAuth error code, never a body.
import type { CredentialIo, CredentialProvider, IssuedCredential } from '../../core/types.ts';

/** A token that says not how long it lives is used this long. */
const DEFAULT_LIFETIME_S = 3600;
/** Largest token answer read. */
const MAX_BYTES = 64 * 1024;

const field = (description: string) => ({ type: 'string', minLength: 1, description });

/** The token endpoint's URL: a path is on the platform's origin. */
export function tokenUrl(given: string, io: CredentialIo): URL {
  // A path names the platform's own origin (the built-in simulator's token endpoint).
  const url = given.startsWith('/') && io.baseUrl ? new URL(given, io.baseUrl) : new URL(given);
  if (!/^https?:$/.test(url.protocol)) throw new Error('token_url is not an http(s) URL');
  return url;
}

/** A token request (form-encoded) and its answer read as an OAuth 2 token response. */
export async function exchange(url: URL, form: Record<string, string | undefined>, io: CredentialIo): Promise<IssuedCredential> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v) body.set(k, v);
  let res: Response;
  try {
    res = await io.fetch(url, {
      method: 'POST', redirect: 'manual', signal: io.signal, body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    throw new Error(`the token endpoint ${url.host} could not be reached (${e.name === 'TimeoutError' ? 'timeout' : e.cause?.code ?? e.name})`);
  }
  const text = (await res.text()).slice(0, MAX_BYTES);
  let json: Record<string, unknown> = {};
  try { json = JSON.parse(text) as Record<string, unknown>; } catch { /* not JSON: said below */ }
  if (!res.ok) {
    // Only the OAuth error code, and only when it looks like one: a description may quote what was sent.
    const code = typeof json.error === 'string' && /^[a-z_]{1,64}$/.test(json.error) ? `: ${json.error}` : '';
    throw new Error(`the token endpoint ${url.host} answered ${res.status}${code}`);
  }
  if (typeof json.access_token !== 'string' || !json.access_token) throw new Error(`the token endpoint ${url.host} answered without an access_token`);
  const lifetime = Number(json.expires_in ?? DEFAULT_LIFETIME_S);
  const issued: IssuedCredential = {
    secret: json.access_token, style: 'bearer',
    expiresAt: io.now + (Number.isFinite(lifetime) && lifetime > 0 ? lifetime : DEFAULT_LIFETIME_S) * 1000,
  };
  if (typeof json.refresh_token === 'string' && json.refresh_token) issued.carry = { refresh_token: json.refresh_token };
  return issued;
}

export const oauth2ClientCredentials: CredentialProvider = {
  name: 'oauth2-client-credentials',
  description: 'OAuth 2 client credentials (Azure Entra ID: token_url https://login.microsoftonline.com/TENANT/oauth2/v2.0/token, scope https://cognitiveservices.azure.com/.default).',
  schema: {
    type: 'object', additionalProperties: false, required: ['token_url', 'client_id', 'client_secret'],
    properties: {
      token_url: field('Token endpoint (a path: on the platform\'s own origin).'),
      client_id: field('Client (application) id.'),
      client_secret: field('Client secret (prefer ${VAR}).'),
      scope: field('Scope asked for.'),
      audience: field('Audience, for providers that ask for one instead of a scope.'),
    },
  },
  obtain: (o, io) => exchange(tokenUrl(o.token_url, io), {
    grant_type: 'client_credentials', client_id: o.client_id, client_secret: o.client_secret, scope: o.scope, audience: o.audience,
  }, io),
};

export const oauth2RefreshToken: CredentialProvider = {
  name: 'oauth2-refresh-token',
  description: 'An OAuth 2 refresh token exchanged for access tokens (a rotated refresh token is used from then on, in this process).',
  schema: {
    type: 'object', additionalProperties: false, required: ['token_url', 'refresh_token'],
    properties: {
      token_url: field('Token endpoint (a path: on the platform\'s own origin).'),
      refresh_token: field('The refresh token (prefer ${VAR}).'),
      client_id: field('Client id, where the provider asks for one.'),
      client_secret: field('Client secret, where the provider asks for one.'),
      scope: field('Scope asked for.'),
    },
  },
  obtain: (o, io) => exchange(tokenUrl(o.token_url, io), {
    grant_type: 'refresh_token', refresh_token: o.refresh_token, client_id: o.client_id, client_secret: o.client_secret, scope: o.scope,
  }, io),
};
