// Stage `admin-keys`: issue, list, show, change and delete keys (one action per route); config keys are read-only here.
import { adminErrors } from './errors.ts';
import type { Ctx, Env, Plugin } from '../../core/types.ts';
import type { IssuedKey } from '../../core/store/types.ts';
import { bodyValidator, configKeyImmutable, keyView, limitsSchema, parseTime, reply, requireKey } from './common.ts';
import { issueKey } from './issue.ts';

type Action = 'create' | 'list' | 'get' | 'update' | 'delete';
interface Options { action: Action; id_param: string }

type Patch = Partial<Pick<IssuedKey, 'disabled' | 'limits' | 'expires_at' | 'models' | 'name'>>;

const readPatch = bodyValidator({
  type: 'object', additionalProperties: false, minProperties: 1,
  properties: {
    disabled: { type: 'boolean' },
    limits: limitsSchema,
    expires_at: { type: ['string', 'number', 'null'] },
    models: { anyOf: [{ type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 }, { type: 'null' }] },
    name: { type: ['string', 'null'], maxLength: 200 },
  },
});

/** null clears a field (no expiry, the group's models, no name); limits replace the old ones as a whole. */
function toPatch(body: Record<string, unknown>): Patch {
  const patch: Patch = {};
  if ('disabled' in body) patch.disabled = body.disabled as boolean;
  if ('limits' in body) patch.limits = body.limits as Patch['limits'];
  if ('expires_at' in body) patch.expires_at = body.expires_at === null ? undefined : parseTime(body.expires_at, 'expires_at');
  if ('models' in body) patch.models = (body.models ?? undefined) as string[] | undefined;
  if ('name' in body) patch.name = (body.name ?? undefined) as string | undefined;
  return patch;
}

async function issuedOnly(env: Env, id: string) {
  const found = await requireKey(env, id);
  if (found.source === 'config') throw configKeyImmutable(id);
  return found;
}

const ACTIONS: Record<Action, (ctx: Ctx, env: Env, id: string) => Promise<void>> = {
  create: (ctx, env) => issueKey(ctx, env),
  async list(ctx, env) {
    const issued = (await env.store.listKeys()).sort((a, b) => a.created_at - b.created_at);
    const keys = [
      ...env.config.keys.map((key) => ({ key, source: 'config' as const })),
      ...issued.map((key) => ({ key, source: 'store' as const })),
    ];
    const now = Date.now();
    reply(ctx, 200, { keys: await Promise.all(keys.map((found) => keyView(found, env, now))) });
  },
  async get(ctx, env, id) {
    reply(ctx, 200, await keyView(await requireKey(env, id), env));
  },
  async update(ctx, env, id) {
    await issuedOnly(env, id);
    const patch = toPatch(await readPatch(ctx));
    if (!await env.store.updateKey(id, patch)) throw adminErrors.key_not_found(id, { param: 'id' });
    ctx.log.info({ key_id: id, fields: Object.keys(patch) }, 'key changed');
    reply(ctx, 200, await keyView(await requireKey(env, id), env));
  },
  async delete(ctx, env, id) {
    await issuedOnly(env, id);
    if (!await env.store.deleteKey(id)) throw adminErrors.key_not_found(id, { param: 'id' });
    ctx.log.info({ key_id: id }, 'key deleted');
    reply(ctx, 200, { id, deleted: true });
  },
};

export const adminKeys: Plugin<Options> = {
  name: 'admin-keys',
  description: 'Manages API keys for the admin API: create (plaintext shown once), list, get, update (disable, limits, expiry, models, name), delete. Place after admin-auth.',
  schema: {
    type: 'object', additionalProperties: false, required: ['action'],
    properties: {
      action: { type: 'string', enum: ['create', 'list', 'get', 'update', 'delete'], description: 'What this route does.' },
      id_param: { type: 'string', default: 'id', description: 'Path parameter holding the key id (get, update, delete).' },
    },
  },
  // Only behind admin-auth: a chain without it is refused when the config loads.
  requires: ['admin'],
  create(options, env) {
    const run = ACTIONS[options.action];
    return async (ctx) => run(ctx, env, ctx.params[options.id_param] ?? '');
  },
};
