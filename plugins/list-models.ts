// Stage `list-models`: answers the model list endpoint with what this key may use, in the route format's list shape.
import { GatewayError } from '../core/errors.ts';
import type { Plugin } from '../core/types.ts';
import { isGlob, matchesAny } from './globs.ts';

export const listModels: Plugin<Record<string, never>> = {
  name: 'list-models',
  description: 'Lists the models this key may use (concrete names and aliases of its group; globs cannot be listed).',
  schema: { type: 'object', additionalProperties: false, properties: {} },
  create(_options, env) {
    return async (ctx) => {
      const key = ctx.key;
      if (!key) throw new GatewayError(500, 'stage_order', 'list-models needs auth before it');
      const group = ctx.group ?? env.config.groups[ctx.route.pool ?? key.group];
      const shape = ctx.format.modelList;
      if (!shape) throw new GatewayError(404, 'not_supported', `The ${ctx.format.name} format has no model list`);
      const names = new Set([...group.models.filter((m) => !isGlob(m)), ...Object.keys(group.model_map)]);
      const visible = [...names].filter((m) => !key.models || matchesAny(key.models, m)).sort();
      const body = JSON.stringify(shape(visible.map((id) => ({ id, owner: group.platform }))));
      ctx.outcome = 'completed';
      ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
  },
};
