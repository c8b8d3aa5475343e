// Loads gateway.yaml: parse with positions, interpolate ${VAR}, merge over the defaults file, validate (root + each
// stage's schema), normalise.
import { readFileSync } from 'node:fs';
import { normalise, takeKindFields, waitingLine, type ConfigDeps } from './config-sections.ts';
import { mergeDefaults, type Layout } from './config-merge.ts';
import { at, readSource, type Origin } from './config-source.ts';
import { reportAjv, validateRoot, type Path } from './config-validate.ts';
import type { Logger } from 'pino';
import type { GatewayConfig } from './types.ts';

export type { ConfigDeps, Layout };
export { parseBytes } from './config-sections.ts';

export class ConfigError extends Error {
  problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** A config loaded: what runs, its warnings, and the effective file with where each part came from (--print-config). */
export interface Loaded { config: GatewayConfig; warnings: string[]; layout: Layout }

/** Read and validate a config file; throws ConfigError listing every problem as FILE:LINE:COL path: message. */
export function loadConfig(file: string, deps: ConfigDeps): Loaded {
  return parseConfig(readText(file), file, deps);
}

export function parseConfig(text: string, file: string, deps: ConfigDeps): Loaded {
  const env = deps.env ?? process.env;
  const problems: string[] = [];
  const operator = readSource(text, file, env, problems);
  const defaults = deps.defaults === undefined ? undefined : readSource(readText(deps.defaults), deps.defaults, env, problems);
  if (problems.length) throw new ConfigError(problems);

  const report = (o: Origin, message: string, onKey = false) => problems.push(`${at(o, onKey)} ${message}`);
  const layout = mergeDefaults(operator, defaults, report);
  if (problems.length) throw new ConfigError(problems);
  const problem = (path: Path, message: string, onKey = false) => report(placeOf(layout, path), message, onKey);

  // Validation fills in the schema's defaults: on a copy, so the layout keeps the file as written.
  const raw = structuredClone(layout.raw);
  takeKindFields(raw, deps, problem);
  const shapeOk = validateRoot(raw);
  if (!shapeOk) for (const e of validateRoot.errors ?? []) reportAjv(e, [], problem);
  const warnings: string[] = [];
  let config: GatewayConfig | undefined;
  try {
    config = normalise(raw, file, deps, problem, warnings, operator.blankVars);
  } catch (err) {
    // Cross-checks on a file with shape errors may trip over them; the shape errors already explain why.
    if (shapeOk) throw err;
  }
  if (problems.length || !config) throw new ConfigError([...new Set(problems)]);
  return { config, warnings, layout };
}

function readText(file: string): string {
  try { return readFileSync(file, 'utf8'); } catch (err) { throw new ConfigError([`${file}: ${(err as Error).message}`]); }
}

/** Where a path of the effective file was written: a route or pipeline in its own file, anything else in the operator's. */
function placeOf(layout: Layout, path: Path): Origin {
  const [section, name, ...rest] = path;
  const placed = name === undefined ? undefined
    : section === 'routes' ? layout.routes[Number(name)]
    : section === 'pipelines' ? layout.pipelines.get(String(name)) : undefined;
  return placed ? { source: placed.source, path: [...placed.path, ...rest] } : { source: layout.operator, path };
}

/** What a loaded file says to its operator at each start or reload: its warnings, and what waits for its variables. */
export function logConfigNotes(log: Pick<Logger, 'warn'>, loaded: { config: GatewayConfig; warnings: string[] }): void {
  for (const w of loaded.warnings) log.warn(w);
  const waiting = waitingLine(loaded.config.waiting);
  if (waiting) log.warn({ disabled: loaded.config.waiting }, waiting);
}
