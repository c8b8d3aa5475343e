// Stage `auth`: finds the caller's key (Bearer, x-api-key, x-goog-api-key, ?key= where allowed) by SHA-256 and checks its state.
import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../core/errors.ts';
import type { Ctx, Plugin } from '../core/types.ts';

interface Options { query_key_paths: string[] }

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
    },
  },
  create(options, env) {
    const adminSha = env.adminSha ? Buffer.from(env.adminSha, 'hex') : undefined;
    return async (ctx, next) => {
      const query = ctx.search ? ctx.url.searchParams : undefined;
      const queryAllowed = options.query_key_paths.some((p) => ctx.path.startsWith(p));
      if (query && (query.has('api_key') || (query.has('key') && !queryAllowed))) {
        throw new GatewayError(400, 'api_key_in_query_deprecated', 'API key in query parameter is deprecated. Please use Authorization header instead.');
      }
      const key = headerKey(ctx) ?? (queryAllowed ? query?.get('key') || undefined : undefined);
      if (!key) throw new GatewayError(401, 'API_KEY_REQUIRED', MISSING);
      const digest = createHash('sha256').update(key).digest();
      if (adminSha && timingSafeEqual(digest, adminSha)) {
        throw new GatewayError(401, 'INVALID_API_KEY', 'The admin token cannot be used on model routes; use an API key');
      }
      // Lookup is by digest, so its timing says nothing about how close a guess was.
      const found = env.keysBySha.get(digest.toString('hex'));
      if (!found) throw new GatewayError(401, 'INVALID_API_KEY', 'Invalid API key');
      if (found.disabled) throw new GatewayError(401, 'API_KEY_DISABLED', 'API key is disabled');
      if (found.expires_at !== undefined && found.expires_at <= Date.now()) {
        throw new GatewayError(403, 'API_KEY_EXPIRED', 'API key has expired', { headers: { 'x-should-retry': 'false' } });
      }
      ctx.key = found;
      await next();
    };
  },
};
