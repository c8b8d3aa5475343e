// --print-config: the effective file as YAML (the operator's sections, routes and pipelines as they run), each section,
// route and pipeline with where it came from, and no secret's value.
import { basename, resolve } from 'node:path';
import { Document, isCollection, isPair, isScalar, type Node } from 'yaml';
import type { Layout, Placed } from './config-merge.ts';
import { lineOf, type Origin } from './config-source.ts';

/** Fields whose value is a secret. An empty one stays empty: it says the account or key is off. */
const SECRET_FIELDS = new Set(['key', 'token', 'credential', 'secret', 'password']);
const MASK = '***';
/** A URL's user and password (a Redis URL's, or a base URL's). */
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i;
/** Sections printed as one flow map each: short settings. */
const FLOW_SECTIONS = new Set(['server', 'store', 'admin']);

export function printConfig(layout: Layout): string {
  const doc = new Document(mask(layout.raw), { aliasDuplicateObjects: false });
  const ops = basename(layout.operator.file);
  const defaults = layout.defaults && basename(layout.defaults.file);
  doc.commentBefore = [
    ` The effective configuration of ${resolve(layout.operator.file)}${layout.defaults ? `, over the defaults of ${layout.defaults.file}` : ''}.`,
    ' Each section, route and pipeline says where it came from. ${VAR}s are filled in; secrets show as ***; fields left',
    ' out take their defaults (the configuration reference).',
  ].join('\n');
  // A pipeline's line is its name's (its stages may start on the next one).
  const from = (o: Origin, onKey: boolean) => `${basename(o.source.file)}:${lineOf(o, onKey)}`;
  const placed = (o: Placed | undefined, onKey = false) => (o ? ` from ${from(o, onKey)}${o.replaces ? `, in place of ${from(o.replaces, onKey)}` : ''}` : '');
  const sections = (doc.contents as { items?: unknown[] } | null)?.items ?? [];
  // Pipelines the file leaves out are added after its routes: shown before them, as they are read.
  const names = sections.map((p) => (isPair(p) && isScalar(p.key) ? p.key.value : undefined));
  const [pipes, routes] = [names.indexOf('pipelines'), names.indexOf('routes')];
  if (pipes > routes && routes !== -1) sections.splice(routes, 0, ...sections.splice(pipes, 1));
  for (const pair of sections) {
    if (!isPair(pair) || !isScalar(pair.key)) continue;
    const name = String(pair.key.value);
    const line = () => lineOf({ source: layout.operator, path: [name] }, true);
    pair.key.commentBefore = {
      file: ` from ${ops}:${line()}`,
      defaults: ` from ${defaults} (${ops} has no ${name}:)`,
      extended: ` from ${defaults}, changed by ${ops}:${line()}`,
    }[layout.sections.get(name) ?? 'file'];
    style(pair.value, [name]);
    if (!isCollection(pair.value)) continue;
    if (name === 'routes') pair.value.items.forEach((item, i) => { (item as Node).comment = placed(layout.routes[i]); });
    if (name === 'pipelines') {
      for (const p of pair.value.items) if (isPair(p) && isScalar(p.key) && p.value) (p.value as Node).comment = placed(layout.pipelines.get(String(p.key.value)), true);
    }
  }
  return doc.toString({ lineWidth: 0 });
}

/** The file's values with every secret replaced: fields named as secrets, and the credentials of URLs. */
function mask(value: unknown, field?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => mask(v));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k)]));
  if (field !== undefined && SECRET_FIELDS.has(field) && value !== '' && value != null) return MASK;
  return typeof value === 'string' ? value.replace(URL_USERINFO, `$1${MASK}@`) : value;
}

/** One line per route, pipeline, key, platform, account and price, as the shipped files are written; groups in blocks. */
function style(node: unknown, path: string[]): void {
  if (!isCollection(node)) return;
  const group = path[0] === 'groups' && (path.length === 2 || (path.length === 3 && path[2] === 'accounts'));
  if ((path.length === 1 && FLOW_SECTIONS.has(path[0])) || (path.length >= 2 && !group)) { node.flow = true; return; }
  for (const item of node.items) {
    if (isPair(item)) style(item.value, [...path, String(isScalar(item.key) ? item.key.value : '')]);
    else style(item, [...path, '']);
  }
}
