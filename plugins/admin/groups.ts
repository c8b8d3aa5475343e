// Stage `admin-groups`: the gateway's groups as a key can be issued to them (GET /admin/groups).
import type { Plugin } from '../../core/types.ts';
import { reply } from './common.ts';

export const adminGroups: Plugin<Record<string, never>> = {
  name: 'admin-groups',
  description: 'Lists the groups of gateway.yaml (name, platform, dedicated, models, aliases, rate multiplier, accounts), so a key can be issued to one. Place after admin-auth.',
  schema: { type: 'object', additionalProperties: false, properties: {} },
  create(_options, env) {
    return async (ctx) => {
      const groups = Object.values(env.config.groups).map((g) => ({
        name: g.name, platform: g.platform, dedicated: g.dedicated, models: g.models, aliases: Object.keys(g.model_map),
        rate_multiplier: g.rate_multiplier, accounts: g.accounts.length, enabled_accounts: g.accounts.filter((a) => a.enabled).length,
      }));
      reply(ctx, 200, { groups });
    };
  },
};
