// Model-name globs ("gpt-5*", "claude-?-opus") compiled once and cached, and the one rule for which models a key may use.
import type { GroupConfig, KeyConfig } from '../core/types.ts';
import { isGlob } from '../core/model-names.ts';

export { isGlob };

const cache = new Map<string, RegExp>();

function compile(glob: string): RegExp {
  let re = cache.get(glob);
  if (!re) {
    const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    cache.set(glob, re = new RegExp(`^${source}$`));
  }
  return re;
}

export const matchesAny = (globs: readonly string[], name: string): boolean => globs.some((g) => g === name || compile(g).test(name));

/**
 * The one model aliasing rule (a group's or an account's model_map): an exact key wins, else the first glob key that
 * matches, in the order written (`"claude-*": gpt-5` maps every Claude name a client sends). Undefined: not mapped.
 */
export function mapModel(map: Record<string, string> | undefined, model: string): string | undefined {
  if (!map) return undefined;
  if (Object.hasOwn(map, model)) return map[model];
  for (const from in map) if (isGlob(from) && compile(from).test(model)) return map[from];
  return undefined;
}

/** A key may use a model its group serves (by glob or alias) that its own list, when it has one, also allows. */
export const modelAllowed = (group: GroupConfig, key: KeyConfig, model: string): boolean =>
  (matchesAny(group.models, model) || mapModel(group.model_map, model) !== undefined) && (!key.models || matchesAny(key.models, model));
