// One YAML file of the config (the operator's gateway.yaml, or the defaults file): parsed with positions, ${VAR}
// interpolated, and every path of it placed as FILE:LINE:COL, so each problem names the file it is in.
import { basename } from 'node:path';
import { LineCounter, parseDocument, visit, isMap, isSeq, isScalar, isPair, type Document, type Node } from 'yaml';
import type { Path } from './config-validate.ts';

export interface Source { file: string; doc: Document; lines: LineCounter }

/** A place in one of the config's files. */
export interface Origin { source: Source; path: Path }

/**
 * Parse and interpolate one file; its syntax and ${VAR} problems are pushed to `problems` (FILE:LINE:COL message).
 * `blankVars` names the variables that left the value at a path empty, so a disabled account can say which to set.
 */
export function readSource(text: string, file: string, env: NodeJS.ProcessEnv, problems: string[]): { source: Source; raw: Record<string, any>; blankVars: (path: Path) => string[] } {
  const lines = new LineCounter();
  const source: Source = { file, doc: parseDocument(text, { lineCounter: lines, uniqueKeys: true }), lines };
  const before = problems.length;
  for (const e of source.doc.errors) problems.push(`${where(source, e.pos[0])} ${e.message.split('\n')[0]}`);
  const blanks = problems.length === before ? interpolate(source.doc, env, (offset, message) => problems.push(`${where(source, offset)} ${message}`)) : new Map();
  return {
    source,
    raw: (problems.length === before ? source.doc.toJS() : undefined) ?? {},
    blankVars: (path) => blanks.get(source.doc.getIn(path, true) as Node) ?? [],
  };
}

export const where = (source: Source, offset: number): string => {
  const p = source.lines.linePos(offset);
  return `${basename(source.file)}:${p.line}:${p.col}`;
};

/** The 1-based line of a path of the file (of its key when `onKey`). */
export const lineOf = (o: Origin, onKey = false): number => o.source.lines.linePos(locate(o.source.doc, o.path, onKey)).line;

/** `FILE:LINE:COL path:` of a place, as every problem starts. */
export const at = (o: Origin, onKey = false): string => `${where(o.source, locate(o.source.doc, o.path, onKey))} ${o.path.join('.') || '(root)'}:`;

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
