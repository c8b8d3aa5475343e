// Stage `admin-key-usage`: one key's totals (today, per day, per model, spend windows) as the operator sees them (GET /admin/keys/{id}/usage).
import type { Plugin } from '../../core/types.ts';
import { usageView } from '../usage.ts';
import { usageQuery } from '../usage-query.ts';
import { keyView, reply, requireKey } from './common.ts';

interface Options { id_param: string }

export const adminKeyUsage: Plugin<Options> = {
  name: 'admin-key-usage',
  description: 'Answers a key\'s usage totals and limits (the /v1/usage view) with the key\'s record; the same query as /v1/usage: ?days=1..90 (default 30), ?start_date=&end_date= (YYYY-MM-DD, per-model totals), ?timezone= (IANA, default UTC). Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: { id_param: { type: 'string', default: 'id', description: 'Path parameter holding the key id.' } },
  },
  // Only behind admin-auth: a chain without it is refused when the config loads.
  requires: ['admin'],
  create(options, env) {
    return async (ctx) => {
      const found = await requireKey(env, ctx.params[options.id_param] ?? '');
      const query = usageQuery(ctx.search ? ctx.url.searchParams : new URLSearchParams());
      const now = Date.now();
      const usage = await env.store.keyUsage(found.key.id, { ...query, now });
      reply(ctx, 200, { key: await keyView(found, env, now), usage: usageView(found.key, found.key.group, usage, now) });
    };
  },
};
