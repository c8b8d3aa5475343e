// Model-name globs ("gpt-5*", "claude-?-opus") compiled once and cached.
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

export const isGlob = (s: string): boolean => /[*?]/.test(s);
