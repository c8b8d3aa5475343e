// Stage `auth`: finds the caller's key (Bearer, x-api-key, x-goog-api-key, ?key= where allowed) by SHA-256 and checks its state.
import { hash } from 'node:crypto';
import { throttled } from '../core/auth-throttle.ts';
import { defineErrors } from '../core/errors.ts';
import type { Ctx, Env, KeyConfig, Plugin } from '../core/types.ts';

interface Options { query_key_paths: string[]; allow_expired: boolean; issued_cache_ms: number }

const errors = defineErrors('auth', {
  api_key_in_query_deprecated: { status: 400, doc: 'A key in `?key=` on a route whose `query_key_paths` do not allow it.', message: 'API key in query parameter is deprecated. Please use Authorization header instead.' },
  api_key_required: { wire: 'API_KEY_REQUIRED', status: 401, doc: 'No key in `Authorization: Bearer`, `x-api-key` or `x-goog-api-key`.', message: 'API key is required in Authorization header (Bearer scheme), x-api-key header, or x-goog-api-key header' },
  invalid_api_key: { wire: 'INVALID_API_KEY', status: 401, doc: 'An unknown key, or the admin token on a model route.', message: (admin: boolean) => (admin ? 'The admin token cannot be used on model routes; use an API key' : 'Invalid API key') },
  too_many_invalid_keys: {
    status: 429, doc: 'Too many invalid keys from the client\'s address (`auth_throttle.keys`): its invalid keys are refused for a while (`retry-after`); a valid key is not.',
    message: (seconds: number) => `Too many invalid API keys from this address: invalid keys are refused for ${seconds} s`, headers: (seconds: number) => ({ 'retry-after': String(seconds) }),
  },
  api_key_disabled: { wire: 'API_KEY_DISABLED', status: 401, doc: 'The key is disabled.', message: 'API key is disabled' },
  api_key_expired: { wire: 'API_KEY_EXPIRED', status: 403, doc: 'The key is past its `expires_at`.', message: 'API key has expired', headers: { 'x-should-retry': 'false' } },
});

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

/** How many keys a process remembers the SHA-256 of. */
const KNOWN_DIGESTS = 4096;

/**
 * The SHA-256 (hex) of keys that named a key record, so a working key is hashed once per process, not on every request
 * (docs/performance.md). Only keys that found a record are kept: a stream of guesses never fills it, and a full
 * table lets go of its oldest. It maps a key to its digest and nothing more: whether the key is still valid is looked up
 * by that digest on every request, so a revoked or disabled key is refused at once. Keys are kept in memory as the
 * request headers that carry them are.
 */
export function knownDigests(limit = KNOWN_DIGESTS) {
  const known = new Map<string, string>();
  return {
    /** The key's digest when it is remembered. */
    get: (key: string): string | undefined => known.get(key),
    remember(key: string, hex: string): void {
      if (known.size >= limit) known.delete(known.keys().next().value!);
      known.set(key, hex);
    },
  };
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
    const adminSha = env.adminSha;
    const issued = issuedKeys(env, options.issued_cache_ms);
    const digests = knownDigests();
    return async (ctx, next) => {
      const query = ctx.search ? ctx.url.searchParams : undefined;
      const queryAllowed = options.query_key_paths.some((p) => ctx.path.startsWith(p));
      if (query && (query.has('api_key') || (query.has('key') && !queryAllowed))) {
        throw errors.api_key_in_query_deprecated();
      }
      const key = headerKey(ctx) ?? (queryAllowed ? query?.get('key') || undefined : undefined);
      if (!key) throw errors.api_key_required();
      const remembered = digests.get(key);
      // One-shot, straight to hex: no Hash stream object, and no Buffer (an ArrayBuffer of its own) per request.
      const hex = remembered ?? hash('sha256', key, 'hex');
      // Compared and looked up by digest, so their timing says nothing about how close a guess was.
      if (hex === adminSha) throw errors.invalid_api_key(true);
      const found = env.keysBySha.get(hex) ?? await issued(hex);
      if (!found) throw await throttled(env.throttles.keys, env.clientAddress(ctx.req), () => errors.invalid_api_key(false), errors.too_many_invalid_keys);
      if (remembered === undefined) digests.remember(key, hex);
      if (found.disabled) throw errors.api_key_disabled();
      if (!options.allow_expired && found.expires_at !== undefined && found.expires_at <= Date.now()) {
        throw errors.api_key_expired();
      }
      ctx.key = found;
      await next();
    };
  },
};
