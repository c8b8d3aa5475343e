// Stage `admin-notifications`: the webhooks and their latest deliveries (GET /admin/notifications), never a URL's path,
// a secret or a body.
import { adminErrors } from './errors.ts';
import type { Plugin } from '../../core/types.ts';
import { reply } from './common.ts';

const PARAMS = new Set(['limit']);

export const adminNotifications: Plugin<{ default_limit: number }> = {
  name: 'admin-notifications',
  description: 'Lists the webhooks of notifications (name, host, events) and their latest deliveries, newest first (?limit= up to notifications.history): event, subject, result (sent, failed), attempts, last status or error, times. Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: { default_limit: { type: 'integer', minimum: 1, default: 50, description: 'Deliveries listed when ?limit is not given.' } },
  },
  requires: ['admin'],
  create(options, env) {
    const { webhooks, history } = env.config.notifications;
    const hooks = webhooks.map((h) => ({ name: h.name, host: new URL(h.url).host, events: h.events }));
    return async (ctx) => {
      const q = ctx.url.searchParams;
      for (const name of q.keys()) {
        if (!PARAMS.has(name)) throw adminErrors.invalid_query({ name, known: [...PARAMS].join(', ') }, { param: name });
      }
      const limit = q.has('limit') ? Number(q.get('limit')) : Math.min(options.default_limit, history);
      if (!Number.isInteger(limit) || limit < 1 || limit > history) throw adminErrors.invalid_limit(history, { param: 'limit' });
      reply(ctx, 200, { webhooks: hooks, deliveries: await env.notify?.deliveries(limit) ?? [] });
    };
  },
};
