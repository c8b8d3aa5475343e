// Credential source `google-service-account`: a service-account key (its JSON, or the path of its file) makes an RS256
// JWT (node:crypto) that the key's own token_uri exchanges for an access token (RFC 7523 jwt-bearer grant). The private
// key is read at each refresh (a rotated file is picked up) and named in no error: those say what is wrong, not what it is.
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { CredentialIo, CredentialProvider, IssuedCredential } from '../../core/types.ts';
import { exchange, tokenUrl } from './oauth2.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google's longest assertion lifetime. */
const ASSERTION_S = 3600;
/** A key file past this size is not a key (a wrong path): it is not read. */
const KEY_FILE_MAX = 64 * 1024;

interface ServiceAccountKey { client_email: string; private_key: KeyObject; private_key_id?: string; token_uri: string }

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** The key's fields; a problem is said without quoting the text (a parse error would echo part of the key). */
async function readKey(given: string): Promise<ServiceAccountKey> {
  let text = given.trim();
  if (!text.startsWith('{')) {
    let bytes: Buffer;
    try {
      bytes = await readFile(text);
    } catch (err) {
      throw new Error(`the service-account key file could not be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (bytes.length > KEY_FILE_MAX) throw new Error('the service-account key file is too large to be a key');
    text = bytes.toString('utf8');
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('the service-account key is not valid JSON');
  }
  if (!json || typeof json !== 'object') throw new Error('the service-account key is not a JSON object');
  if (json.type !== undefined && json.type !== 'service_account') throw new Error('the key is not a service-account key (its type is not service_account)');
  for (const f of ['client_email', 'private_key', 'token_uri'] as const) {
    if (typeof json[f] !== 'string' || !json[f]) throw new Error(`the service-account key has no ${f}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(json.private_key as string);
  } catch {
    throw new Error('the service-account key\'s private_key is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error('the service-account key\'s private_key is not an RSA key');
  return {
    client_email: json.client_email as string, private_key: key, token_uri: json.token_uri as string,
    ...(typeof json.private_key_id === 'string' ? { private_key_id: json.private_key_id } : {}),
  };
}

/** The signed assertion: iss the service account, aud the token endpoint, the scope asked for, an hour at most. */
export function assertion(key: ServiceAccountKey, aud: string, scope: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) }));
  const claims = b64url(JSON.stringify({ iss: key.client_email, scope, aud, iat, exp: iat + ASSERTION_S }));
  const signature = sign('sha256', Buffer.from(`${header}.${claims}`), key.private_key);
  return `${header}.${claims}.${b64url(signature)}`;
}

async function obtain(o: Record<string, any>, io: CredentialIo): Promise<IssuedCredential> {
  const key = await readKey(String(o.key));
  // A token_uri that is a path is on the platform's own origin (the built-in simulator), as an OAuth 2 token_url is.
  const url = tokenUrl(o.token_uri ?? key.token_uri, io);
  const issued = await exchange(url, {
    grant_type: JWT_BEARER_GRANT, assertion: assertion(key, url.href, o.scope ?? CLOUD_PLATFORM_SCOPE, io.now),
  }, io);
  return { secret: issued.secret, style: issued.style, expiresAt: issued.expiresAt };
}

export const googleServiceAccount: CredentialProvider = {
  name: 'google-service-account',
  description: 'A Google service-account key (its JSON, or the path of its file): a signed JWT exchanged at the key\'s token_uri for an access token (Vertex AI).',
  schema: {
    type: 'object', additionalProperties: false, required: ['key'],
    properties: {
      key: { type: 'string', minLength: 1, description: 'The service-account key: its JSON text (prefer ${VAR}), or the path of its JSON file (read at each refresh; relative to the working directory).' },
      scope: { type: 'string', minLength: 1, description: `Scope asked for (default ${CLOUD_PLATFORM_SCOPE}).` },
      token_uri: { type: 'string', minLength: 1, description: 'Token endpoint in place of the key\'s own token_uri (a path: on the platform\'s own origin).' },
    },
  },
  obtain,
};
