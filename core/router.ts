// Method + path patterns compiled once per config load: literal segments, {name} (one segment, stops at ':'),
// {name*} (one whole segment, ':' included), *name (the rest).
import { coreErrors } from './errors.ts';

export interface Match<R> { route: R; params: Record<string, string> }

interface Entry<R> { route: R; names: string[] }
interface Dynamic<R> { regex: RegExp; wholeSegment: boolean; byMethod: Map<string, Entry<R>> }

const escape = (s: string) => s.replace(/[.+?^$()[\]\\|]/g, '\\$&');

export interface CompiledPattern {
  regex: RegExp;
  names: string[];
  /** True when a {name*} capture takes a whole segment; such patterns are tried after all others. */
  wholeSegment: boolean;
}

const HINT = 'use {name} for one segment, {name*} for a whole segment with its colons, or *name at the end for the rest';

/** Turn a pattern into a regex; throws on a malformed pattern (reported by config validation). */
export function compilePattern(pattern: string): CompiledPattern | null {
  if (!pattern.startsWith('/')) throw new Error('a path pattern must start with "/"');
  const names: string[] = [];
  let source = '';
  let wholeSegment = false;
  const token = /\{([A-Za-z_][A-Za-z0-9_]*)(\*?)\}|\*([A-Za-z_][A-Za-z0-9_]*)$|[{}*]/g;
  let last = 0;
  for (let m = token.exec(pattern); m; m = token.exec(pattern)) {
    if (!m[1] && !m[3]) throw new Error(`unexpected "${m[0]}" at offset ${m.index}: ${HINT}`);
    source += escape(pattern.slice(last, m.index));
    const name = m[1] ?? m[3];
    if (names.includes(name)) throw new Error(`parameter "${name}" appears twice`);
    names.push(name);
    // {name} stops at ':' so that a literal ':verb' can follow it; {name*} takes colons too (ids like "ft:base:org::id").
    if (m[2]) wholeSegment = true;
    source += m[3] ? '(.*)' : m[2] ? '([^/]+)' : '([^/:]+)';
    last = token.lastIndex;
  }
  if (names.length === 0) return null;
  source += escape(pattern.slice(last));
  return { regex: new RegExp(`^${source}$`), names, wholeSegment };
}

/** The route for a method, with HEAD answered by a GET route. */
function forMethod<T>(byMethod: Map<string, T>, method: string): T | undefined {
  return byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
}

export class Router<R> {
  #literal = new Map<string, Map<string, R>>();
  #dynamic: Dynamic<R>[] = [];

  /**
   * Add a route; the first route declared for a method and path shape wins. Dynamic patterns are tried in
   * declaration order, except that patterns with a {name*} capture come after all others and take only paths no
   * other route matches: a literal such as `{model}:generateContent` wins over `{model*}` whatever the order.
   */
  add(method: string, pattern: string, route: R): void {
    const compiled = compilePattern(pattern);
    if (!compiled) {
      const byMethod = this.#literal.get(pattern) ?? new Map<string, R>();
      this.#literal.set(pattern, byMethod);
      if (!byMethod.has(method)) byMethod.set(method, route);
      return;
    }
    let entry = this.#dynamic.find((d) => d.regex.source === compiled.regex.source);
    if (!entry) {
      entry = { regex: compiled.regex, wholeSegment: compiled.wholeSegment, byMethod: new Map() };
      const firstWhole = this.#dynamic.findIndex((d) => d.wholeSegment);
      if (compiled.wholeSegment || firstWhole === -1) this.#dynamic.push(entry);
      else this.#dynamic.splice(firstWhole, 0, entry);
    }
    if (!entry.byMethod.has(method)) entry.byMethod.set(method, { route, names: compiled.names });
  }

  /** Find the route for method + path; throws a 404 or 405 GatewayError when there is none. */
  match(method: string, path: string): Match<R> {
    const literal = this.#literal.get(path);
    const literalRoute = literal && forMethod(literal, method);
    if (literalRoute) return { route: literalRoute, params: {} };
    const allowed = new Set<string>(literal?.keys());
    for (const d of this.#dynamic) {
      // {name*} patterns come last and take only what nothing else matched, for any method: a GET on a
      // POST-only `{model}:generateContent` path is a 405, not a model named "x:generateContent".
      if (d.wholeSegment && allowed.size) break;
      const m = d.regex.exec(path);
      if (!m) continue;
      const entry = forMethod(d.byMethod, method);
      if (!entry) { for (const k of d.byMethod.keys()) allowed.add(k); continue; }
      const params: Record<string, string> = {};
      for (let i = 0; i < entry.names.length; i++) params[entry.names[i]] = safeDecode(m[i + 1]);
      return { route: entry.route, params };
    }
    if (allowed.size) throw coreErrors.methodNotAllowed(method, [...allowed]);
    throw coreErrors.notFound(path);
  }
}

function safeDecode(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}
