// The operator's file over the defaults file. Routes and pipelines the operator leaves out come from the defaults; a
// plain list (routes) or map (pipelines) replaces them; { extends: default, add, remove } changes them. Each route and
// pipeline keeps the place it was written, so a problem in it points at its own file and line.
import type { Origin, Source } from './config-source.ts';
import { reportAjv, validatePipelinesExtend, validateRoutesExtend, type Path } from './config-validate.ts';

/** A route or pipeline where it was written, and the default one it took the place of. */
export interface Placed extends Origin { replaces?: Origin }

/** How a section of the effective file was made. */
export type SectionFrom = 'file' | 'defaults' | 'extended';

export interface Layout {
  /** The effective file: the operator's sections, with routes and pipelines as they run. */
  raw: Record<string, any>;
  operator: Source;
  defaults?: Source;
  sections: Map<string, SectionFrom>;
  routes: Placed[];
  pipelines: Map<string, Placed>;
}

type Report = (o: Origin, message: string, onKey?: boolean) => void;
interface Read { source: Source; raw: Record<string, any> }

const isMapping = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const SECTIONS = ['pipelines', 'routes'];

/** The effective file; its problems are reported to `problem` (the caller stops on any: nothing below makes sense). */
export function mergeDefaults(operator: Read, defaults: Read | undefined, problem: Report): Layout {
  const layout: Layout = { raw: operator.raw, operator: operator.source, defaults: defaults?.source, sections: new Map(), routes: [], pipelines: new Map() };
  const def = defaults && checkDefaults(defaults, problem);
  // Not a map of sections: the root schema says so.
  if (!isMapping(operator.raw)) return layout;
  const op = operator.raw;
  layout.raw = { ...op };
  for (const name of Object.keys(op)) layout.sections.set(name, 'file');
  const here = (path: Path): Origin => ({ source: operator.source, path });
  const there = (path: Path): Origin => ({ source: defaults!.source, path });
  /** The extend form checked: true when it is well formed and there are defaults to change. */
  const extend = (name: string, validate: typeof validateRoutesExtend): boolean => {
    const ok = validate(op[name]);
    if (!ok) for (const e of validate.errors ?? []) reportAjv(e, [name], (p, m, k) => problem(here(p), m, k));
    if (!def) problem(here([name, 'extends']), 'there is no defaults file to extend');
    layout.sections.set(name, 'extended');
    return ok && !!def;
  };

  // Routes: one with the method and path of a default route takes its place; the rest come after the defaults.
  if (!Object.hasOwn(op, 'routes') && def) {
    layout.raw.routes = def.routes;
    layout.routes = def.routes.map((_, j) => there(['routes', j]));
    layout.sections.set('routes', 'defaults');
  } else if (!Object.hasOwn(op, 'routes')) {
    problem(here([]), 'missing required field "routes"');
  } else if (Array.isArray(op.routes)) {
    layout.routes = op.routes.map((_, k) => here(['routes', k]));
  } else if (isMapping(op.routes) && extend('routes', validateRoutesExtend)) {
    let kept = def!.routes.map((route, j) => ({ route, placed: there(['routes', j]) as Placed }));
    const { add = [], remove = [] } = op.routes as { add?: unknown[]; remove?: string[] };
    for (const [k, entry] of remove.entries()) {
      const [method, path] = entry.includes(' ') ? entry.split(/\s+/, 2) : [undefined, entry];
      const gone = (r: any) => r?.path === path && (method === undefined || r?.method === method);
      if (!kept.some(({ route }) => gone(route))) problem(here(['routes', 'remove', k]), `"${entry}" is not a default route: name the path of one (every method) or "METHOD /path"`);
      kept = kept.filter(({ route }) => !gone(route));
    }
    for (const [k, route] of add.entries()) {
      const placed: Placed = here(['routes', 'add', k]);
      const same = kept.findIndex((d) => isMapping(route) && d.placed.source !== operator.source && d.route?.method === route.method && d.route?.path === route.path);
      if (same === -1) kept.push({ route, placed });
      else kept[same] = { route, placed: { ...placed, replaces: kept[same].placed } };
    }
    layout.raw.routes = kept.map((k) => k.route);
    layout.routes = kept.map((k) => k.placed);
  }

  // Pipelines, by name.
  if (!Object.hasOwn(op, 'pipelines') && def) {
    layout.raw.pipelines = def.pipelines;
    for (const name of Object.keys(def.pipelines)) layout.pipelines.set(name, there(['pipelines', name]));
    layout.sections.set('pipelines', 'defaults');
  } else if (isMapping(op.pipelines) && Object.hasOwn(op.pipelines, 'extends')) {
    if (extend('pipelines', validatePipelinesExtend)) {
      const { add = {}, remove = [] } = op.pipelines as { add?: Record<string, unknown>; remove?: string[] };
      const merged = new Map(Object.entries(def!.pipelines).map(([name, stages]) => [name, { stages, placed: there(['pipelines', name]) as Placed }]));
      for (const [k, name] of remove.entries()) {
        if (!merged.delete(name)) problem(here(['pipelines', 'remove', k]), `"${name}" is not a default pipeline (${Object.keys(def!.pipelines).join(', ')})`);
      }
      for (const [name, stages] of Object.entries(add)) {
        const replaces = merged.get(name)?.placed;
        merged.set(name, { stages, placed: { ...here(['pipelines', 'add', name]), ...(replaces ? { replaces } : {}) } });
      }
      layout.raw.pipelines = Object.fromEntries([...merged].map(([name, m]) => [name, m.stages]));
      for (const [name, m] of merged) layout.pipelines.set(name, m.placed);
    }
  } else if (isMapping(op.pipelines)) {
    for (const name of Object.keys(op.pipelines)) layout.pipelines.set(name, here(['pipelines', name]));
    missingDefaultPipelines(layout, operator.source, problem);
  }
  return layout;
}

/** The defaults file holds a list of routes and a map of pipelines, nothing else. */
function checkDefaults({ source, raw }: Read, problem: Report): { routes: any[]; pipelines: Record<string, unknown> } {
  const at = (path: Path): Origin => ({ source, path });
  if (!isMapping(raw)) problem(at([]), 'a defaults file is a map of routes and pipelines');
  const all = isMapping(raw) ? raw : {};
  for (const name of Object.keys(all)) if (!SECTIONS.includes(name)) problem(at([name]), `unknown field "${name}": a defaults file holds routes and pipelines only`, true);
  if (!Array.isArray(all.routes)) problem(at(['routes']), 'must be a list of routes');
  if (!isMapping(all.pipelines)) problem(at(['pipelines']), 'must be a map of pipelines');
  return { routes: Array.isArray(all.routes) ? all.routes : [], pipelines: isMapping(all.pipelines) ? all.pipelines : {} };
}

/** A plain map of pipelines replaces the defaults': the default routes kept must still find theirs. Said once, here. */
function missingDefaultPipelines(layout: Layout, operator: Source, problem: Report): void {
  const names = new Set(Object.keys(layout.raw.pipelines));
  const missing = new Set<string>();
  layout.routes.forEach((placed, i) => {
    const wanted = layout.raw.routes[i]?.pipeline;
    if (placed.source !== operator && typeof wanted === 'string' && !names.has(wanted)) missing.add(wanted);
  });
  if (!missing.size) return;
  problem({ source: operator, path: ['pipelines'] }, `replaces every default pipeline, and the default routes use ${[...missing].map((n) => `"${n}"`).join(', ')}, which it lacks: extend the defaults instead (pipelines: { extends: default, add: { ... } }) or declare them`, true);
}
