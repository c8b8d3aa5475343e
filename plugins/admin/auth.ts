// Stage `admin-auth`: lets a request into /admin/* only with the admin token (Bearer), compared as SHA-256 digests in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import { throttled } from '../../core/auth-throttle.ts';
import { adminErrors } from './errors.ts';
import type { Plugin } from '../../core/types.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export const adminAuth: Plugin<Record<string, never>> = {
  name: 'admin-auth',
  description: 'Guards the admin API with admin.token (Authorization: Bearer). Model API keys are refused; an empty admin.token disables every admin route (503).',
  schema: { type: 'object', additionalProperties: false, properties: {} },
  provides: ['admin'],
  create(_options, env) {
    const adminSha = env.adminSha ? Buffer.from(env.adminSha, 'hex') : undefined;
    return async (ctx, next) => {
      if (!adminSha) {
        throw adminErrors.admin_api_disabled();
      }
      const token = BEARER.exec(ctx.req.headers.authorization ?? '')?.[1];
      if (!token) throw adminErrors.admin_token_required();
      // Comparing fixed-size digests keeps the comparison constant-time whatever the token's length.
      const digest = createHash('sha256').update(token).digest();
      if (timingSafeEqual(digest, adminSha)) return next();
      const hex = digest.toString('hex');
      if (env.keysBySha.has(hex) || await env.store.getKey(hex)) {
        throw adminErrors.model_key_refused();
      }
      throw await throttled(env.throttles.admin, env.clientAddress(ctx.req), () => adminErrors.invalid_admin_token(), adminErrors.too_many_invalid_tokens);
    };
  },
};
