// Model ids read from an upstream's model list: only plain, short strings, since they are shown to clients and matched as names.
const ID = /^[\x21-\x7e]{1,200}$/;

/** The `field` of each entry of a list (with an optional prefix removed, e.g. Gemini's "models/"), the well-formed ones only. */
export function idsOf(list: unknown, field: string, prefix = ''): string[] {
  if (!Array.isArray(list)) return [];
  const ids: string[] = [];
  for (const entry of list) {
    const value = (entry as Record<string, unknown> | null)?.[field];
    if (typeof value !== 'string') continue;
    const id = prefix && value.startsWith(prefix) ? value.slice(prefix.length) : value;
    if (ID.test(id)) ids.push(id);
  }
  return ids;
}
