// Stage `model-allowlist`: reads the requested model, checks it against the group and key allow-lists, applies model_map.
import { GatewayError } from '../core/errors.ts';
import type { Ctx, Plugin } from '../core/types.ts';
import { mapModel, modelAllowed } from './globs.ts';

interface Options { list_endpoint: string; required: boolean }

async function requestedModel(ctx: Ctx): Promise<{ model: unknown; body?: Record<string, unknown> }> {
  const where = ctx.format.model;
  if ('param' in where) {
    // The body is still read and checked here, before anything is metered or sent: a malformed one never goes upstream.
    const body = ctx.format.jsonBody && (await ctx.body()).length > 0 ? await ctx.json() : undefined;
    return { model: ctx.params[where.param], body };
  }
  if ('read' in where) return { model: await where.read(ctx) };
  const body = await ctx.json();
  return { model: body[where.body], body };
}

export const modelAllowlist: Plugin<Options> = {
  name: 'model-allowlist',
  description: 'Allows only models the group (and the key, when it narrows them) may use; rewrites aliases from model_map.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      list_endpoint: { type: 'string', default: '/v1/models', description: 'Endpoint named in the refusal message, where the allowed models are listed.' },
      required: { type: 'boolean', default: true, description: 'Refuse a request that names no model; false lets bodiless calls (e.g. a cancel subpath) through unchecked.' },
    },
  },
  requires: ['key', 'group'],
  provides: ['model'],
  create(options) {
    return async (ctx, next) => {
      const group = ctx.group!;
      if (!options.required && (await ctx.body()).length === 0) return next();
      const { model, body } = await requestedModel(ctx);
      if (!options.required && model === undefined) return next();
      if (typeof model !== 'string' || model === '') {
        throw new GatewayError(400, 'model_required', 'The request must name a model (a non-empty string)', { param: 'model' });
      }
      if (!modelAllowed(group, ctx.key!, model)) {
        throw new GatewayError(404, 'model_not_found',
          `The model "${model}" does not exist or this API key may not use it. GET ${options.list_endpoint} lists the models you can use.`, { param: 'model' });
      }
      ctx.model = model;
      ctx.upstreamModel = mapModel(group.model_map, model) ?? model;
      ctx.stream = ctx.format.isStream(body, ctx);
      const where = ctx.format.model;
      if (ctx.upstreamModel !== model) {
        if (body && 'body' in where) ctx.setJson({ ...body, [where.body]: ctx.upstreamModel });
        else if ('read' in where) await where.write?.(ctx, ctx.upstreamModel);
      }
      await next();
    };
  },
};
