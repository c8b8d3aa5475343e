// The model names the gateway knows: named by the configuration (a glob names none), by a key's own list, or listed by
// an upstream. Only these may label a metric series; a client can invent any number of others, which share `other`.
import { OTHER_MODEL } from './store/rollup.ts';
import type { GatewayConfig, KeyConfig, ModelLabels } from './types.ts';

/** Names an upstream listed, kept per runtime at most (its list is the operator's upstream's, its length is not theirs). */
const LISTED_NAMES = 4096;
/** A name longer than this is never taken from a list (real model ids are far shorter). */
const LISTED_CHARS = 256;

export const isGlob = (s: string): boolean => /[*?]/.test(s);

export class ModelNames implements ModelLabels {
  readonly #named = new Set<string>();
  readonly #listed = new Set<string>();

  constructor(config: Pick<GatewayConfig, 'groups' | 'keys' | 'pricing'>) {
    const add = (names: Iterable<string> | undefined) => { for (const n of names ?? []) if (!isGlob(n)) this.#named.add(n); };
    const maps = (map: Record<string, string> | undefined) => { add(Object.keys(map ?? {})); add(Object.values(map ?? {})); };
    for (const group of Object.values(config.groups)) {
      add(group.models);
      maps(group.model_map);
      for (const account of group.accounts) { add(account.models); maps(account.model_map); }
    }
    for (const key of config.keys) add(key.models);
    add(Object.keys(config.pricing));
  }

  /** Ids an upstream's model list named (list-models asks it). */
  listed(ids: Iterable<string>): void {
    for (const id of ids) {
      if (this.#listed.size >= LISTED_NAMES) return;
      if (id.length <= LISTED_CHARS) this.#listed.add(id);
    }
  }

  known(model: string, key?: Pick<KeyConfig, 'models'>): boolean {
    return this.#named.has(model) || this.#listed.has(model) || (key?.models?.includes(model) === true && !isGlob(model));
  }

  /** A model's metric label: its name when known, else `other`. */
  label(model: string, key?: Pick<KeyConfig, 'models'>): string {
    return this.known(model, key) ? model : OTHER_MODEL;
  }
}
