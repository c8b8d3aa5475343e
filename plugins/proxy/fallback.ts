// Fallback across groups (groups.NAME.fallback): when no account of the serving group could take a request, the next
// listed group the key may use, whose models include the request's and which its format reaches, serves it instead. The
// operator's list grants its groups to the group's keys, but a dedicated group only to keys that list it in pools.
import { GatewayError } from '../../core/errors.ts';
import type { Attempt, Ctx, Env, GroupConfig } from '../../core/types.ts';
import { modelAllowed } from '../globs.ts';
import { mapForGroup } from '../model-allowlist.ts';
import { reach, type Reach } from '../reach.ts';
import { FELL_BACK_FROM } from '../vars.ts';

/** The pool's answers (pool-errors.ts) that say no account of the group could take the request, not the request's fault. */
const GROUP_EXHAUSTED = new Set(['NO_ACCOUNT_AVAILABLE', 'UPSTREAM_FAILED', 'ALL_ACCOUNTS_RATE_LIMITED']);

/** Whether `err` is a group's exhaustion that a fallback group may answer instead. */
export const exhaustedGroup = (err: unknown): err is GatewayError => err instanceof GatewayError && GROUP_EXHAUSTED.has(err.code);

/** The first group of the request's first group's fallback list that can serve it, and how its format reaches it. */
function nextGroup(ctx: Ctx, env: Env, from: readonly string[]): { group: GroupConfig; how: Reach } | undefined {
  const key = ctx.key;
  const model = ctx.model;
  if (!key || model === undefined) return undefined;
  const first = env.config.groups[from[0]];
  for (const name of first.fallback) {
    const group = env.config.groups[name];
    if (!group || from.includes(name) || (group.dedicated && !key.pools.includes(name)) || !modelAllowed(group, key, model)) continue;
    const how = reach(group, env.config.platforms[group.platform], ctx.format, env.formats, ctx.route.path);
    if (how) return { group, how };
  }
  return undefined;
}

/**
 * Moves the request to its next fallback group (group, platform, upstream format, the group's model name in the body),
 * marking the attempts made so far with the group they were made in; false when no group is left.
 */
export async function fallBack(ctx: Ctx, env: Env, trail: Attempt[]): Promise<boolean> {
  const from = [...(ctx.get(FELL_BACK_FROM) ?? []), ctx.group!.name];
  const found = nextGroup(ctx, env, from);
  if (!found) return false;
  const { group: next, how } = found;
  for (const a of trail) a.group ??= ctx.group!.name;
  ctx.group = next;
  ctx.platform = env.config.platforms[next.platform];
  ctx.upstreamFormat = how.native ? undefined : how.upstream;
  ctx.set(FELL_BACK_FROM, from);
  await mapForGroup(ctx, next, ctx.format.jsonBody && (await ctx.body()).length > 0 ? await ctx.json() : undefined);
  return true;
}
