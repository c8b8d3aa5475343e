// Stage `group-check`: resolves the key's group (or the route's dedicated pool) and checks its platform serves this format.
import { GatewayError } from '../core/errors.ts';
import type { Plugin } from '../core/types.ts';
import { formatReaches } from './reach.ts';

interface Options { format: boolean }

export const groupCheck: Plugin<Options> = {
  name: 'group-check',
  description: 'Resolves the group serving this request and checks that the route format reaches its platform (today: the platform serves it natively).',
  schema: {
    type: 'object', additionalProperties: false,
    properties: { format: { type: 'boolean', default: true, description: 'Require the group\'s platform to serve the route format (false for model lists, which answer for any platform).' } },
  },
  requires: ['key'],
  provides: ['group'],
  create(options, env) {
    return async (ctx, next) => {
      const key = ctx.key!;
      const pool = ctx.route.pool;
      if (pool && !key.pools.includes(pool)) {
        throw new GatewayError(403, 'POOL_NOT_ALLOWED', `This API key may not use the dedicated pool "${pool}"`);
      }
      const group = env.config.groups[pool ?? key.group];
      if (!pool && group.dedicated) {
        throw new GatewayError(403, 'GROUP_DEDICATED', `Group "${group.name}" is dedicated and is served only on its own entry points`);
      }
      const platform = env.config.platforms[group.platform];
      if (options.format && !formatReaches(platform, ctx.format.name)) {
        throw ctx.format.unsupported?.(platform.name) ?? new GatewayError(400, 'FORMAT_NOT_SUPPORTED',
          `This API key's group "${group.name}" is on platform "${platform.name}", which does not serve the ${ctx.format.name} API; use that platform's own endpoint`);
      }
      ctx.group = group;
      ctx.platform = platform;
      await next();
    };
  },
};
