// Stage `auth`: finds the caller's key (Bearer, x-api-key, x-goog-api-key, ?key= where allowed) by SHA-256 and checks its state.
import { hash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../core/errors.ts';
import type { Ctx, Env, KeyConfig, Plugin } from '../core/types.ts';

interface Options { query_key_paths: string[]; allow_expired: boolean; issued_cache_ms: number }

const MISSING = 'API key is required in Authorization header (Bearer scheme), x-api-key header, or x-goog-api-key header';

function headerKey(ctx: Ctx): string | undefined {
  const h = ctx.req.headers;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(h.authorization ?? '');
  if (bearer) return bearer[1];
  for (const name of ['x-api-key', 'x-goog-api-key']) {
    const v = h[name];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return undefined;
}

/** Issued keys live in the store; a short per-process cache keeps the lookup off the hot path, cleared on any change. */
function issuedKeys(env: Env, ttlMs: number): (sha: string) => Promise<KeyConfig | undefined> {
  const cache = new Map<string, { key: KeyConfig | undefined; until: number }>();
  env.onKeysChanged(() => cache.clear());
  return async (sha) => {
    const now = Date.now();
    const hit = cache.get(sha);
    if (hit && hit.until > now) return hit.key;
    const key = await env.store.getKey(sha);
    if (cache.size >= 10_000) cache.clear();
    cache.set(sha, { key, until: now + ttlMs });
    return key;
  };
}

export const auth: Plugin<Options> = {
  name: 'auth',
  description: 'Authenticates the client key and attaches it to the request.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      query_key_paths: {
        type: 'array', items: { type: 'string' }, default: ['/v1beta/', '/antigravity/v1beta/'],
        description: 'Path prefixes where ?key= is accepted (Gemini style); elsewhere it is refused with 400.',
      },
      allow_expired: { type: 'boolean', default: false, description: 'Let an expired key through (its holder may still read its own usage).' },
      issued_cache_ms: { type: 'integer', minimum: 0, default: 10_000, description: 'How long a process remembers an issued key looked up in the store (changes clear it at once).' },
    },
  },
  provides: ['key'],
  create(options, env) {
    const adminSha = env.adminSha ? Buffer.from(env.adminSha, 'hex') : undefined;
    const issued = issuedKeys(env, options.issued_cache_ms);
    return async (ctx, next) => {
      const query = ctx.search ? ctx.url.searchParams : undefined;
      const queryAllowed = options.query_key_paths.some((p) => ctx.path.startsWith(p));
      if (query && (query.has('api_key') || (query.has('key') && !queryAllowed))) {
        throw new GatewayError(400, 'api_key_in_query_deprecated', 'API key in query parameter is deprecated. Please use Authorization header instead.');
      }
      const key = headerKey(ctx) ?? (queryAllowed ? query?.get('key') || undefined : undefined);
      if (!key) throw new GatewayError(401, 'API_KEY_REQUIRED', MISSING);
      const digest = hash('sha256', key, 'buffer'); // one-shot: no Hash stream object per request
      if (adminSha && timingSafeEqual(digest, adminSha)) {
        throw new GatewayError(401, 'INVALID_API_KEY', 'The admin token cannot be used on model routes; use an API key');
      }
      // Lookup is by digest, so its timing says nothing about how close a guess was.
      const hex = digest.toString('hex');
      const found = env.keysBySha.get(hex) ?? await issued(hex);
      if (!found) throw new GatewayError(401, 'INVALID_API_KEY', 'Invalid API key');
      if (found.disabled) throw new GatewayError(401, 'API_KEY_DISABLED', 'API key is disabled');
      if (!options.allow_expired && found.expires_at !== undefined && found.expires_at <= Date.now()) {
        throw new GatewayError(403, 'API_KEY_EXPIRED', 'API key has expired', { headers: { 'x-should-retry': 'false' } });
      }
      ctx.key = found;
      await next();
    };
  },
};
