// Issued-key helpers both stores share: applying an update patch and listing order.
import type { IssuedKey, Store } from './types.ts';

export type KeyPatch = Parameters<Store['updateKey']>[1];

/** Shallow patch; a field set to undefined is removed (e.g. expires_at: undefined clears the expiry). */
export function patchKey(key: IssuedKey, patch: KeyPatch): IssuedKey {
  const next: Record<string, unknown> = { ...key };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete next[k];
    else next[k] = v;
  }
  return next as unknown as IssuedKey;
}

/** Oldest first, by id on ties, so every store lists keys in one order. */
export const sortKeys = (keys: IssuedKey[]): IssuedKey[] =>
  keys.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Round trip through JSON, as Redis stores keys, so both stores drop undefined fields alike and never alias. */
export const cloneKey = (key: IssuedKey): IssuedKey => JSON.parse(JSON.stringify(key)) as IssuedKey;
