// The rule for what a model list shows: which vendor lists a format's list draws on, and which of a group's models belong to them.
import type { FormatAdapter, GroupConfig, KeyConfig, ModelListUpstream, PlatformConfig } from '../../core/types.ts';
import { isGlob, matchesAny, modelAllowed } from '../globs.ts';
import { reach } from '../reach.ts';

/** The vendor lists a platform serves natively, each with the first native format that uses it (for its auth style). */
export function nativeLists(platform: PlatformConfig, formats: Record<string, FormatAdapter>): Map<ModelListUpstream, FormatAdapter> {
  const lists = new Map<ModelListUpstream, FormatAdapter>();
  for (const name of platform.formats ?? []) {
    const format = formats[name];
    if (format?.modelListUpstream && !lists.has(format.modelListUpstream)) lists.set(format.modelListUpstream, format);
  }
  return lists;
}

/**
 * The vendor lists a list in this shape shows: its own vendor's, when a format of that vendor is native to the
 * platform; every list native to the platform, when a format of the vendor reaches it only through translation;
 * none when no format of the vendor reaches the group.
 */
export function shownLists(group: GroupConfig, platform: PlatformConfig, shape: FormatAdapter, formats: Record<string, FormatAdapter>): ModelListUpstream[] {
  const own = shape.modelListUpstream;
  const vendor = own ? Object.values(formats).filter((f) => f.modelListUpstream === own) : [shape];
  const native = nativeLists(platform, formats);
  if (own && native.has(own)) return [own];
  return vendor.some((f) => reach(group, platform, f, formats) !== undefined) ? [...native.keys()] : [];
}

export interface ListInput {
  group: GroupConfig;
  key: KeyConfig;
  /** The vendor lists this answer shows (of those in `lists`). */
  shown: ModelListUpstream[];
  /** Every vendor list native to the group's platform → the ids it named, or undefined when it could not be asked. */
  lists: Map<ModelListUpstream, Set<string> | undefined>;
  /** Concrete model names of the pricing table: listed for a glob when its vendor list could not be asked. */
  priced: string[];
}

/**
 * A group's concrete models and aliases, and the ids its globs match (from the vendor list, or else the priced names),
 * that belong to a shown list and that the key may use. A name belongs to the lists that name it (an alias, to those
 * naming its target); a name no list names belongs to every list, as nothing says whose it is.
 */
export function visibleModels(i: ListInput): string[] {
  if (!i.shown.length) return [];
  const known = [...i.lists].filter((entry): entry is [ModelListUpstream, Set<string>] => entry[1] !== undefined);
  const belongs = (name: string): boolean => {
    const owners = known.filter(([, ids]) => ids.has(name));
    return owners.length === 0 || owners.some(([list]) => i.shown.includes(list));
  };
  const names = new Set<string>();
  for (const m of i.group.models) if (!isGlob(m) && belongs(m)) names.add(m);
  // A glob alias ("claude-*": gpt-5) names no model of its own to list.
  for (const [alias, target] of Object.entries(i.group.model_map)) if (!isGlob(alias) && belongs(target)) names.add(alias);
  const globs = i.group.models.filter(isGlob);
  if (globs.length) {
    for (const list of i.shown) {
      const ids = i.lists.get(list) ?? i.priced.filter(belongs);
      for (const id of ids) if (matchesAny(globs, id)) names.add(id);
    }
  }
  return [...names].filter((m) => modelAllowed(i.group, i.key, m)).sort();
}
