// Stage `group-check`: resolves the key's group (or the route's dedicated pool) and checks this format reaches it, natively
// or translated (plugins/reach.ts).
import { defineErrors } from '../core/errors.ts';
import type { Plugin } from '../core/types.ts';
import { reach } from './reach.ts';

interface Options { format: boolean }

const errors = defineErrors('group-check', {
  pool_not_allowed: { wire: 'POOL_NOT_ALLOWED', status: 403, doc: 'The key does not list the route\'s dedicated pool.', message: (pool: string) => `This API key may not use the dedicated pool "${pool}"` },
  group_dedicated: { wire: 'GROUP_DEDICATED', status: 403, doc: 'A dedicated group is used outside the routes that name it as pool.', message: (group: string) => `Group "${group}" is dedicated and is served only on its own entry points` },
  format_not_supported: {
    wire: 'FORMAT_NOT_SUPPORTED', status: 400, doc: 'The route\'s format reaches the key\'s group neither natively nor translated (its `client_formats` leave it out, or nothing to translate into).',
    message: (p: { group: string; platform: string; format: string }) => `This API key's group "${p.group}" is on platform "${p.platform}", which does not serve the ${p.format} API; use that platform's own endpoint`,
  },
});

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
        throw errors.pool_not_allowed(pool);
      }
      const group = env.config.groups[pool ?? key.group];
      if (!pool && group.dedicated) {
        throw errors.group_dedicated(group.name);
      }
      const platform = env.config.platforms[group.platform];
      if (options.format) {
        const how = reach(group, platform, ctx.format, env.formats, ctx.route.path);
        if (!how) {
          throw ctx.format.unsupported?.(platform.name) ?? errors.format_not_supported({ group: group.name, platform: platform.name, format: ctx.format.name });
        }
        if (!how.native) ctx.upstreamFormat = how.upstream;
      }
      ctx.group = group;
      ctx.platform = platform;
      await next();
    };
  },
};
