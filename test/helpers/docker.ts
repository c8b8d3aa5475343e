// Reads what `docker build` would, without a Docker engine: the Dockerfile's instructions, the build context left by
// .dockerignore, and the files the gateway loads at run time (its import graph, page files, data files beside them).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, normalize, posix, relative } from 'node:path';
import { parse } from 'yaml';

export interface Instruction { op: string; args: string }

/** Instructions in order: comments and blank lines dropped, `\` continuations joined. */
export function dockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\r?\n(\s*#[^\n]*\n)*/g, ' ');
  return joined.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op.toUpperCase(), args: rest.join(' ') };
  });
}

/** An exec-form argument list (`["node", "x"]`), or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const list: unknown = JSON.parse(args);
  return Array.isArray(list) && list.every((a) => typeof a === 'string') ? list : undefined;
}

/**
 * The .dockerignore rules as Docker applies them (moby/patternmatcher): a path is left out when it or any folder above
 * it matches a pattern; `*` and `?` stay within one path segment, `**` spans any number of them. Exceptions (`!`) are
 * refused: this reader does not implement them, so a file using them cannot be checked here.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const patterns = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const bad = patterns.find((p) => p.startsWith('!'));
  if (bad) throw new Error(`.dockerignore exception "${bad}" is not supported by this check`);
  const res = patterns.map((p) => new RegExp(`^${posix.normalize(p.replace(/^\/+/, '')).replace(/\/$/, '').split(/(\*\*\/?|\*|\?)/).map((part) => {
    if (part === '**/') return '(?:.*/)?';
    if (part === '**') return '.*';
    if (part === '*') return '[^/]*';
    if (part === '?') return '[^/]';
    return part.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }).join('')}$`));
  return (path) => {
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      if (res.some((re) => re.test(prefix))) return true;
    }
    return false;
  };
}

/** Every file of the build context (relative, with `/`), folders left out by .dockerignore not entered. */
export function contextFiles(root: string, ignored: (path: string) => boolean, under = ''): string[] {
  const files: string[] = [];
  for (const name of readdirSync(join(root, under))) {
    const path = under ? `${under}/${name}` : name;
    if (ignored(path)) continue;
    if (statSync(join(root, path)).isDirectory()) files.push(...contextFiles(root, ignored, path));
    else files.push(path);
  }
  return files;
}

// Runtime imports only: `import type` and `export type` are erased before Node runs a file.
const STATIC = /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The files reached from the entry points by runtime imports, and the packages they import (bare specifiers). */
export function importGraph(root: string, entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(join(root, file), 'utf8');
    for (const [, spec] of [...text.matchAll(STATIC), ...text.matchAll(DYNAMIC)]) {
      if (spec.startsWith('.')) visit(relative(root, normalize(join(root, dirname(file), spec))).split('\\').join('/'));
      else if (!isBuiltin(spec)) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
  };
  for (const entry of entries) visit(entry);
  return { files, packages };
}

/**
 * Files the `page` and `docs` stages of a config file's routes serve (relative to the gateway's directory `root`): a
 * page's file; the docs' README and every Markdown file of their folder (the stage's defaults when it names none).
 */
export function pageFiles(configText: string, root: string): string[] {
  const config = parse(configText) as { routes: { pipeline: unknown }[] };
  const files = new Set<string>();
  for (const route of config.routes) {
    if (!Array.isArray(route.pipeline)) continue;
    for (const stage of route.pipeline) {
      const file = (stage as { page?: { file?: string } })?.page?.file;
      if (file) files.add(file);
      if (stage !== 'docs' && !(stage as { docs?: unknown })?.docs) continue;
      const docs = (stage === 'docs' ? {} : (stage as { docs: { readme?: string; dir?: string } | null }).docs ?? {});
      const dir = docs.dir ?? 'docs';
      files.add(docs.readme ?? 'README.md');
      for (const f of readdirSync(join(root, dir))) if (f.endsWith('.md')) files.add(posix.join(dir, f));
    }
  }
  return [...files];
}

/** Non-code files beside the runtime modules (e.g. the store's Lua scripts, read by path at load). */
export function filesBeside(root: string, modules: Iterable<string>): string[] {
  const dirs = new Set([...modules].map((m) => posix.dirname(m)));
  return [...dirs].flatMap((d) => readdirSync(join(root, d)).map((name) => (d === '.' ? name : `${d}/${name}`)))
    .filter((f) => statSync(join(root, f)).isFile() && !f.endsWith('.ts'));
}
