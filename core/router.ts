// Method + path patterns compiled once per config load: literal segments, {name} (one segment, stops at ':'), *name (the rest).
import { coreErrors } from './errors.ts';

export interface Match<R> { route: R; params: Record<string, string> }

interface Entry<R> { route: R; names: string[] }
interface Dynamic<R> { regex: RegExp; byMethod: Map<string, Entry<R>> }

const escape = (s: string) => s.replace(/[.+?^$()[\]\\|]/g, '\\$&');

/** Turn a pattern into a regex; throws on a malformed pattern (reported by config validation). */
export function compilePattern(pattern: string): { regex: RegExp; names: string[] } | null {
  if (!pattern.startsWith('/')) throw new Error('a path pattern must start with "/"');
  const names: string[] = [];
  let source = '';
  const token = /\{([A-Za-z_][A-Za-z0-9_]*)\}|\*([A-Za-z_][A-Za-z0-9_]*)$|[{}*]/g;
  let last = 0;
  for (let m = token.exec(pattern); m; m = token.exec(pattern)) {
    if (!m[1] && !m[2]) throw new Error(`unexpected "${m[0]}" at offset ${m.index}: use {name} for one segment or *name at the end for the rest`);
    source += escape(pattern.slice(last, m.index));
    const name = m[1] ?? m[2];
    if (names.includes(name)) throw new Error(`parameter "${name}" appears twice`);
    names.push(name);
    source += m[1] ? '([^/:]+)' : '(.*)';
    last = token.lastIndex;
  }
  if (names.length === 0) return null;
  source += escape(pattern.slice(last));
  return { regex: new RegExp(`^${source}$`), names };
}

/** The route for a method, with HEAD answered by a GET route. */
function forMethod<T>(byMethod: Map<string, T>, method: string): T | undefined {
  return byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
}

export class Router<R> {
  #literal = new Map<string, Map<string, R>>();
  #dynamic: Dynamic<R>[] = [];

  /** Add a route; the first route declared for a method and path shape wins. */
  add(method: string, pattern: string, route: R): void {
    const compiled = compilePattern(pattern);
    if (!compiled) {
      const byMethod = this.#literal.get(pattern) ?? new Map<string, R>();
      this.#literal.set(pattern, byMethod);
      if (!byMethod.has(method)) byMethod.set(method, route);
      return;
    }
    let entry = this.#dynamic.find((d) => d.regex.source === compiled.regex.source);
    if (!entry) this.#dynamic.push(entry = { regex: compiled.regex, byMethod: new Map() });
    if (!entry.byMethod.has(method)) entry.byMethod.set(method, { route, names: compiled.names });
  }

  /** Find the route for method + path; throws a 404 or 405 GatewayError when there is none. */
  match(method: string, path: string): Match<R> {
    const literal = this.#literal.get(path);
    const literalRoute = literal && forMethod(literal, method);
    if (literalRoute) return { route: literalRoute, params: {} };
    const allowed = new Set<string>(literal?.keys());
    for (const d of this.#dynamic) {
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
