// Stage `admin-key-usage`: one key's totals (today, per day, per model, spend windows) as the operator sees them (GET /admin/keys/{id}/usage).
import { GatewayError } from '../../core/errors.ts';
import type { Plugin } from '../../core/types.ts';
import { usageView } from '../usage.ts';
import { keyView, reply, requireKey } from './common.ts';

interface Options { id_param: string }

export const adminKeyUsage: Plugin<Options> = {
  name: 'admin-key-usage',
  description: 'Answers a key\'s usage totals and limits (the /v1/usage view) with the key\'s record; ?days=1..90 (default 30). Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: { id_param: { type: 'string', default: 'id', description: 'Path parameter holding the key id.' } },
  },
  create(options, env) {
    return async (ctx) => {
      const found = await requireKey(env, ctx.params[options.id_param] ?? '');
      const q = ctx.url.searchParams;
      const days = q.has('days') ? Number(q.get('days')) : 30;
      if (!Number.isInteger(days) || days < 1 || days > 90) throw new GatewayError(400, 'invalid_days', 'days must be an integer from 1 to 90', { param: 'days' });
      const now = Date.now();
      const usage = await env.store.keyUsage(found.key.id, { days, now });
      reply(ctx, 200, { key: keyView(found), usage: usageView(found.key, found.key.group, usage, now) });
    };
  },
};
