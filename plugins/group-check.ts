// Stage `group-check`: resolves the key's group (or the route's dedicated pool) and checks this format reaches it, natively
// or translated (plugins/reach.ts).
import { GatewayError } from '../core/errors.ts';
import type { Plugin } from '../core/types.ts';
import { reach } from './reach.ts';

interface Options { format: boolean }

export const groupCheck: Plugin<Options> = {
  name: 'group-check',
  description: 'Resolves the group serving this request and checks that the route format reaches it: natively, or translated into the platform\'s format (the group\'s client_formats allowing).',
  schema: {
    type: 'object', additionalProperties: false,
    properties: { format: { type: 'boolean', default: true, description: 'Require the route format to reach the group (false for model lists, which answer for any platform).' } },
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
      if (options.format) {
        const how = reach(group, platform, ctx.format, env.formats, ctx.route.path);
        if (!how) {
          throw ctx.format.unsupported?.(platform.name) ?? new GatewayError(400, 'FORMAT_NOT_SUPPORTED',
            `This API key's group "${group.name}" is on platform "${platform.name}", which does not serve the ${ctx.format.name} API; use that platform's own endpoint`);
        }
        if (!how.native) ctx.upstreamFormat = how.upstream;
      }
      ctx.group = group;
      ctx.platform = platform;
      await next();
    };
  },
};
