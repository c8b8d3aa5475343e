// Loads gateway.yaml: parse with positions, interpolate ${VAR}, validate (root + each stage's schema), normalise.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { LineCounter, parseDocument, visit, isMap, isSeq, isScalar, isPair, type Document, type Node } from 'yaml';
import { normalise, type ConfigDeps } from './config-sections.ts';
import { reportAjv, validateRoot, type Path } from './config-validate.ts';
import type { GatewayConfig } from './types.ts';

export type { ConfigDeps };
export { parseBytes } from './config-sections.ts';

export class ConfigError extends Error {
  problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Read and validate a config file; throws ConfigError listing every problem as FILE:LINE:COL path: message. */
export function loadConfig(file: string, deps: ConfigDeps): { config: GatewayConfig; warnings: string[] } {
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (err) { throw new ConfigError([`${file}: ${(err as Error).message}`]); }
  return parseConfig(text, file, deps);
}

export function parseConfig(text: string, file: string, deps: ConfigDeps): { config: GatewayConfig; warnings: string[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  const where = (offset: number) => { const p = lineCounter.linePos(offset); return `${basename(file)}:${p.line}:${p.col}`; };
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const e of doc.errors) problems.push(`${where(e.pos[0])} ${e.message.split('\n')[0]}`);
  if (problems.length) throw new ConfigError(problems);

  const at = (path: Path, onKey = false) => `${where(locate(doc, path, onKey))} ${path.join('.') || '(root)'}:`;
  const problem = (path: Path, message: string, onKey = false) => problems.push(`${at(path, onKey)} ${message}`);

  const blanks = interpolate(doc, deps.env ?? process.env, (offset, message) => problems.push(`${where(offset)} ${message}`));
  if (problems.length) throw new ConfigError(problems);
  const blankVars = (path: Path) => blanks.get(doc.getIn(path, true) as Node) ?? [];

  const raw = (doc.toJS() ?? {}) as Record<string, any>;
  const shapeOk = validateRoot(raw);
  if (!shapeOk) for (const e of validateRoot.errors ?? []) reportAjv(e, [], problem);
  let config: GatewayConfig | undefined;
  try {
    config = normalise(raw, file, deps, problem, warnings, blankVars);
  } catch (err) {
    // Cross-checks on a file with shape errors may trip over them; the shape errors already explain why.
    if (shapeOk) throw err;
  }
  if (problems.length || !config) throw new ConfigError([...new Set(problems)]);
  return { config, warnings };
}

/** Offset of the node at path (or of its key), falling back to the deepest node that exists. */
function locate(doc: Document, path: Path, onKey: boolean): number {
  let node: unknown = doc.contents;
  let offset = (node as Node | null)?.range?.[0] ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isMap(node)) {
      const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === String(seg));
      if (!pair) break;
      if (i === path.length - 1 && onKey) return (pair.key as Node).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      node = node.items[Number(seg)];
    } else break;
    offset = (node as Node | null)?.range?.[0] ?? offset;
  }
  return offset;
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}/g;

/**
 * Replace ${VAR} and ${VAR:-default} in every scalar value. Returns the scalars left empty with the variables that emptied
 * them, so a disabled account can say which variable to set.
 */
function interpolate(doc: Document, env: NodeJS.ProcessEnv, fail: (offset: number, message: string) => void): Map<Node, string[]> {
  const blanks = new Map<Node, string[]>();
  visit(doc, {
    Scalar(key, node) {
      if (key === 'key' || typeof node.value !== 'string' || !node.value.includes('${')) return;
      const names: string[] = [];
      const value = node.value.replace(VAR, (_m, name: string, fallback: string | undefined) => {
        // Shell semantics: ${VAR:-d} replaces unset or empty; ${VAR} fails only when unset.
        const v = env[name];
        names.push(name);
        if (fallback !== undefined) return v === undefined || v === '' ? fallback : v;
        if (v !== undefined) return v;
        fail(node.range?.[0] ?? 0, `environment variable ${name} is not set (use \${${name}:-default} to make it optional)`);
        return '';
      });
      node.value = value;
      if (value === '') blanks.set(node, names);
    },
  });
  return blanks;
}
