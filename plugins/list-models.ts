// Stage `list-models`: answers the model list (or one model) with what this key may use, in the client's list shape.
import { GatewayError } from '../core/errors.ts';
import type { Ctx, Env, FormatAdapter, Plugin } from '../core/types.ts';
import { isGlob, modelAllowed } from './globs.ts';

interface Options { shape_by_header: Record<string, string>; model_param: string }

/** The format whose list shape the client expects: a header can name another format (e.g. a vendor version header). */
function shapeFor(ctx: Ctx, env: Env, byHeader: Record<string, string>): FormatAdapter {
  for (const [header, format] of Object.entries(byHeader)) {
    if (ctx.req.headers[header] !== undefined && env.formats[format]) return env.formats[format];
  }
  return ctx.format;
}

export const listModels: Plugin<Options> = {
  name: 'list-models',
  description: 'Lists the models this key may use (concrete names and aliases of its group; globs cannot be listed), or one of them.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      shape_by_header: {
        type: 'object', additionalProperties: { type: 'string' }, default: {},
        description: 'Answer in another format\'s list shape when the request carries this header, e.g. { anthropic-version: anthropic-messages }.',
      },
      model_param: { type: 'string', default: 'model', description: 'Path parameter that names one model (a model-detail route).' },
    },
  },
  create(options, env) {
    for (const f of Object.values(options.shape_by_header)) {
      if (!env.formats[f]) throw new Error(`list-models: unknown format "${f}" in shape_by_header`);
    }
    return async (ctx) => {
      const key = ctx.key;
      if (!key) throw new GatewayError(500, 'stage_order', 'list-models needs auth before it');
      const group = ctx.group ?? env.config.groups[ctx.route.pool ?? key.group];
      const format = shapeFor(ctx, env, options.shape_by_header);
      const names = new Set([...group.models.filter((m) => !isGlob(m)), ...Object.keys(group.model_map)]);
      const visible = [...names].filter((m) => modelAllowed(group, key, m)).sort().map((id) => ({ id, owner: group.platform }));
      const one = ctx.params[options.model_param];
      let body: unknown;
      if (one !== undefined) {
        const id = one.replace(/^models\//, '');
        // Any model the key may use can be looked up, including one allowed only by a glob.
        const found = modelAllowed(group, key, id) ? { id, owner: group.platform } : undefined;
        if (!found || !format.modelInfo) throw new GatewayError(404, 'model_not_found', `The model "${id}" does not exist or this API key may not use it`);
        body = format.modelInfo(found);
      } else {
        if (!format.modelList) throw new GatewayError(404, 'not_supported', `The ${format.name} format has no model list`);
        body = format.modelList(visible);
      }
      const text = JSON.stringify(body);
      ctx.outcome = 'completed';
      ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
  },
};
