// Stage `list-models`: answers the model list (or one model) with what this key may use through its group, in the client's list shape.
import { defineErrors } from '../../core/errors.ts';
import { modelErrors } from '../model-allowlist.ts';
import type { AccountConfig, Ctx, Env, FormatAdapter, GroupConfig, ModelListUpstream, PlatformConfig, Plugin } from '../../core/types.ts';
import { finishRequest } from '../upstream-access.ts';
import { isGlob, modelAllowed } from '../globs.ts';
import { catalogue, type CatalogueOptions } from './catalogue.ts';
import { nativeLists, shownLists, visibleModels } from './visible.ts';
import { sendJson } from '../../core/reply.ts';

interface Options extends CatalogueOptions { shape_by_header: Record<string, string>; model_param: string }

const errors = defineErrors('list-models', {
  not_supported: { status: 404, doc: 'The route\'s format has no model list.', message: (format: string) => `The ${format} format has no model list` },
});

/** The format whose list shape the client expects: a header can name another format (e.g. a vendor version header). */
function shapeFor(ctx: Ctx, env: Env, byHeader: Record<string, string>): FormatAdapter {
  for (const [header, format] of Object.entries(byHeader)) {
    if (ctx.req.headers[header] !== undefined && env.formats[format]) return env.formats[format];
  }
  return ctx.format;
}

/** The header of a list (or model) no account can serve now, named like x-gateway-limit. */
const NO_ACCOUNT = { 'x-gateway-warning': 'no_enabled_account' };

const ms = (description: string, value: number, minimum = 0) => ({ type: 'integer', minimum, default: value, description });

export const listModels: Plugin<Options> = {
  name: 'list-models',
  description: 'Lists the models this key may use through its group: concrete names, aliases, and for globs the models the upstream itself lists (asked through one of the group\'s accounts, cached, refreshed in the background; the priced names the globs match when it cannot be asked). A format\'s list shows the models of the vendor lists that format reaches. With a model path parameter, answers that one model. A group with no enabled account lists nothing, with x-gateway-warning: no_enabled_account.',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      shape_by_header: {
        type: 'object', additionalProperties: { type: 'string' }, default: {},
        description: 'Answer in another format\'s list shape when the request carries this header, e.g. { anthropic-version: anthropic-messages }.',
      },
      model_param: { type: 'string', default: 'model', description: 'Path parameter that names one model (a model-detail route).' },
      ttl_ms: ms('How long an upstream\'s model list is used before it is asked again (behind a request, which gets the list it had).', 600_000, 1000),
      first_wait_ms: ms('How long the first request for a group waits for its upstream\'s list; past it, it is answered with the priced names its globs match.', 2000),
      retry_ms: ms('After a failed ask, how long before the upstream is asked again.', 30_000, 1000),
      timeout_ms: ms('Longest wait for one upstream model-list answer.', 10_000, 1),
    },
  },
  requires: ['key'],
  create(options, env) {
    for (const f of Object.values(options.shape_by_header)) {
      if (!env.formats[f]) throw new Error(`list-models: unknown format "${f}" in shape_by_header`);
    }
    const upstreamIds = catalogue(env, options);
    const priced = Object.keys(env.config.pricing).filter((name) => !isGlob(name));

    /** What each vendor list native to the platform names: asked only when globs need it or several vendors share the platform. */
    async function vendorLists(group: GroupConfig, platform: PlatformConfig): Promise<Map<ModelListUpstream, Set<string> | undefined>> {
      const native = nativeLists(platform, env.formats);
      const needed = group.models.some(isGlob) || native.size > 1;
      const entries = await Promise.all([...native].map(async ([list, format]) => {
        const auth = env.upstreamAuth[platform.auth ?? format.upstreamAuth];
        const finish = async (account: AccountConfig, path: string, headers: Record<string, string>) => {
          const out = await finishRequest(env, { platform, group: group.name, account, format }, { method: 'GET', path, headers });
          return { path: out.path, headers: out.headers as Record<string, string> };
        };
        return [list, needed ? await upstreamIds(group, { list, auth, baseUrl: platform.base_url, finish }) : undefined] as const;
      }));
      return new Map(entries);
    }

    return async (ctx) => {
      const key = ctx.key!;
      const group = ctx.group ?? env.config.groups[ctx.route.pool ?? key.group];
      const platform = ctx.platform ?? env.config.platforms[group.platform];
      const format = shapeFor(ctx, env, options.shape_by_header);
      const one = ctx.params[options.model_param];
      // A group with no enabled account serves no model: its list is empty (valid for every SDK's parser) and the header says why.
      const dark = !group.accounts.some((a) => a.enabled);
      let body: unknown;
      if (one !== undefined) {
        const id = one.replace(/^models\//, '');
        // Any model the key may use can be looked up, including one allowed only by a glob.
        const found = modelAllowed(group, key, id) ? { id, owner: group.platform } : undefined;
        if (!found || !format.modelInfo) throw modelErrors.model_not_found({ model: id });
        body = format.modelInfo(found);
      } else {
        if (!format.modelList) throw errors.not_supported(format.name);
        const shown = dark ? [] : shownLists(group, platform, format, env.formats);
        const lists = shown.length ? await vendorLists(group, platform) : new Map();
        body = format.modelList(visibleModels({ group, key, shown, lists, priced }).map((id) => ({ id, owner: group.platform })));
      }
      ctx.end('completed');
      sendJson(ctx.res, 200, body, dark ? NO_ACCOUNT : {});
    };
  },
};
