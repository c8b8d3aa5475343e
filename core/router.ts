// Method + path patterns compiled once per config load: literal segments, {name} (one segment, stops at ':'),
// {name*} (one whole segment, ':' included), *name (the rest). Captures are decoded and checked: none can carry a
// separator or a dot segment, so a filled-in upstream path keeps the shape of its template.
import { coreErrors, GatewayError } from './errors.ts';

export interface Match<R> { route: R; params: Record<string, string> }

/** A request no route takes (404, 405) or whose captures are refused (400), with the route nearest to it, if any. */
export class RouteMiss<R> extends GatewayError {
  /** The route the path matched, or the one sharing its longest literal prefix: its format renders the error. */
  near: R | undefined;
  constructor(err: GatewayError, near: R | undefined) {
    super(err.status, err.code, err.message, { headers: err.headers });
    this.near = near;
  }
}

/** What a capture may be: anchored patterns per parameter name (a route's `params`). */
export type ParamRules = Record<string, RegExp>;

interface Entry<R> { route: R; names: string[]; rules: ParamRules | undefined }
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
  /** Every route with the literal part of its pattern before the first capture, for naming the route nearest a miss. */
  #prefixes: { prefix: string; route: R }[] = [];

  /**
   * Add a route; the first route declared for a method and path shape wins. Dynamic patterns are tried in
   * declaration order, except that patterns with a {name*} capture come after all others and take only paths no
   * other route matches: a literal such as `{model}:generateContent` wins over `{model*}` whatever the order.
   */
  add(method: string, pattern: string, route: R, rules?: ParamRules): void {
    const compiled = compilePattern(pattern);
    this.#prefixes.push({ prefix: pattern.split(/[{*]/, 1)[0], route });
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
    if (!entry.byMethod.has(method)) entry.byMethod.set(method, { route, names: compiled.names, rules });
  }

  /**
   * Find the route for method + path; throws a RouteMiss: 404 or 405 when there is none, 400 when a capture carries a
   * separator, a dot segment or a control character, 404 when it breaks the route's own rule for it.
   */
  match(method: string, path: string): Match<R> {
    const literal = this.#literal.get(path);
    const literalRoute = literal && forMethod(literal, method);
    if (literalRoute) return { route: literalRoute, params: {} };
    const allowed = new Set<string>(literal?.keys());
    let other: R | undefined = literal?.values().next().value;
    for (const d of this.#dynamic) {
      // {name*} patterns come last and take only what nothing else matched, for any method: a GET on a
      // POST-only `{model}:generateContent` path is a 405, not a model named "x:generateContent".
      if (d.wholeSegment && allowed.size) break;
      const m = d.regex.exec(path);
      if (!m) continue;
      const entry = forMethod(d.byMethod, method);
      if (!entry) {
        for (const [k, e] of d.byMethod) { allowed.add(k); other ??= e.route; }
        continue;
      }
      const params: Record<string, string> = {};
      for (let i = 0; i < entry.names.length; i++) {
        const name = entry.names[i];
        const value = decodeCapture(m[i + 1]);
        if (value === undefined) throw new RouteMiss(coreErrors.invalid_path(name), entry.route);
        if (entry.rules?.[name] && !entry.rules[name].test(value)) throw new RouteMiss(coreErrors.route_not_found(path), entry.route);
        params[name] = value;
      }
      return { route: entry.route, params };
    }
    if (allowed.size) throw new RouteMiss(coreErrors.method_not_allowed({ method, allowed: [...allowed] }), other);
    throw new RouteMiss(coreErrors.route_not_found(path), this.near(path));
  }

  /** The route whose pattern shares the longest literal prefix with the path (first declared among equals). */
  near(path: string): R | undefined {
    let best: { prefix: string; route: R } | undefined;
    for (const p of this.#prefixes) {
      if (path.startsWith(p.prefix) && p.prefix.length > (best?.prefix.length ?? 0)) best = p;
    }
    return best?.route;
  }
}

// A decoded segment must not be empty or a dot segment, nor hold a separator, a query or fragment mark, a backslash
// (some servers read it as a slash) or a control character: filled into an upstream path, it must stay one segment.
const BAD_SEGMENT = /^\.{0,2}$|[/?#\\\x00-\x1f\x7f]/;

/** The capture percent-decoded segment by segment (a *rest capture keeps its slashes), or undefined when refused. */
function decodeCapture(raw: string): string | undefined {
  const segments = raw.split('/');
  for (let i = 0; i < segments.length; i++) {
    let s: string;
    try { s = decodeURIComponent(segments[i]); } catch { return undefined; }
    if (BAD_SEGMENT.test(s)) return undefined;
    segments[i] = s;
  }
  return segments.join('/');
}
