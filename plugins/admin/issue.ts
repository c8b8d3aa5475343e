// Issuing a key (POST /admin/keys): validate against the configured groups, generate the secret, store only its SHA-256.
import { createHash, randomBytes } from 'node:crypto';
import { adminErrors } from './errors.ts';
import type { Ctx, Env } from '../../core/types.ts';
import type { IssuedKey, KeyLimits } from '../../core/store/types.ts';
import { bodyValidator, keyView, limitsSchema, parseTime, reply } from './common.ts';

interface IssueBody { group: string; name?: string; pools?: string[]; models?: string[]; limits?: KeyLimits; expires_at?: string | number }

const readBody = bodyValidator({
  type: 'object', additionalProperties: false, required: ['group'],
  properties: {
    group: { type: 'string', minLength: 1 },
    name: { type: 'string', maxLength: 200 },
    pools: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    models: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
    limits: limitsSchema,
    expires_at: { type: ['string', 'number'] },
  },
});

/** The same rules gateway.yaml's keys follow: a real group, and dedicated groups only as pools. */
function checkGroups(env: Env, body: IssueBody): void {
  const groups = env.config.groups;
  // Own names only: "constructor" or "__proto__" is no group.
  const group = (name: string) => (Object.hasOwn(groups, name) ? groups[name] : undefined);
  const known = Object.keys(groups).join(', ');
  const main = group(body.group);
  if (!main) throw adminErrors.unknown_group({ group: body.group, known }, { param: 'group' });
  const pools = body.pools ?? [];
  for (const pool of pools) {
    if (!group(pool)?.dedicated) throw adminErrors.invalid_pool(pool, { param: 'pools' });
  }
  if (main.dedicated && !pools.includes(body.group)) {
    throw adminErrors.dedicated_group(body.group, { param: 'group' });
  }
}

function newId(env: Env): string {
  for (;;) {
    const id = `key_${randomBytes(6).toString('hex')}`;
    if (!env.config.keys.some((k) => k.id === id)) return id;
  }
}

export async function issueKey(ctx: Ctx, env: Env): Promise<void> {
  const body = await readBody(ctx) as unknown as IssueBody;
  checkGroups(env, body);
  const expires = body.expires_at === undefined ? undefined : parseTime(body.expires_at, 'expires_at');
  // Same shape as the keys sub2api-compatible clients expect: sk- and 32 random bytes in hex.
  const secret = `sk-${randomBytes(32).toString('hex')}`;
  const record: IssuedKey = {
    id: newId(env), sha256: createHash('sha256').update(secret).digest('hex'),
    group: body.group, pools: body.pools ?? [], models: body.models, limits: body.limits ?? {},
    expires_at: expires, disabled: false, created_at: Date.now(), name: body.name,
  };
  await env.store.putKey(record);
  ctx.log.info({ key_id: record.id, group: record.group }, 'key issued');
  reply(ctx, 201, { key: secret, record: await keyView({ key: record, source: 'store' }, env) });
}
