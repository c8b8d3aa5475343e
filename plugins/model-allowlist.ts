// Stage `model-allowlist`: reads the requested model, checks it against the group and key allow-lists, applies model_map.
import { defineErrors } from '../core/errors.ts';
import type { Ctx, GroupConfig, Plugin } from '../core/types.ts';
import { mapModel, modelAllowed } from './globs.ts';

interface Options { list_endpoint: string; required: boolean }

/** The longest model name taken: a name is echoed in errors and written to logs and records, and no vendor's is near it. */
export const MAX_MODEL_NAME = 256;

export const modelErrors = defineErrors('model-allowlist', {
  model_required: { status: 400, doc: 'The request names no model (or a non-string one).', message: (text: string | undefined) => text ?? 'The request must name a model (a non-empty string)' },
  model_not_found: {
    status: 404, doc: 'The model is not served by the key\'s group, or the key may not use it.',
    message: (p: { model: string; list?: string }) => `The model "${p.model}" does not exist or this API key may not use it${p.list ? `. GET ${p.list} lists the models you can use.` : ''}`,
  },
});

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

/**
 * The group's name for the requested model (model_map) as ctx.upstreamModel, written into the request where its format
 * carries the model; from the body as the client sent it (`body`), since an earlier group's name may be in it now.
 */
export async function mapForGroup(ctx: Ctx, group: GroupConfig, body: Record<string, unknown> | undefined): Promise<void> {
  const model = ctx.model!;
  const before = ctx.upstreamModel;
  ctx.upstreamModel = mapModel(group.model_map, model) ?? model;
  if (ctx.upstreamModel === (before ?? model)) return;
  const where = ctx.format.model;
  if (body && 'body' in where) ctx.setJson({ ...body, [where.body]: ctx.upstreamModel });
  else if ('read' in where) await where.write?.(ctx, ctx.upstreamModel);
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
        throw modelErrors.model_required(undefined, { param: 'model' });
      }
      if (model.length > MAX_MODEL_NAME) {
        throw modelErrors.model_required(`The model name is ${model.length} characters long; at most ${MAX_MODEL_NAME} are taken`, { param: 'model' });
      }
      if (!modelAllowed(group, ctx.key!, model)) {
        throw modelErrors.model_not_found({ model, list: options.list_endpoint }, { param: 'model' });
      }
      ctx.model = model;
      ctx.stream = ctx.format.isStream(body, ctx);
      await mapForGroup(ctx, group, body);
      await next();
    };
  },
};
