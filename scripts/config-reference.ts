// Prints the gateway.yaml reference (markdown) from the schema descriptions; `--write` refreshes docs/configuration.md between its markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { pipelinesExtend, rootSchema, routesExtend } from '../core/config-schema.ts';
import { credentialSources, kinds, plugins } from '../app/registry.ts';
import type { JSONSchema } from '../core/types.ts';

const BEGIN = '<!-- config-reference:begin -->';
const END = '<!-- config-reference:end -->';
/** The page that carries the reference (served at /docs/configuration). */
export const REFERENCE_FILE = 'docs/configuration.md';

function typeOf(s: JSONSchema): string {
  if ('const' in s) return JSON.stringify(s.const);
  if (s.enum) return (s.enum as unknown[]).join(' \\| ');
  if (s.anyOf) return (s.anyOf as JSONSchema[]).map((x) => ('const' in x ? JSON.stringify(x.const) : typeOf(x))).join(' \\| ');
  if (s.type === 'array') return `list of ${typeOf((s.items ?? {}) as JSONSchema)}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object' && !s.properties) return 'map';
  return [s.type].flat().filter(Boolean).join(' \\| ') || 'any';
}

/** The other form a section may take in gateway.yaml (the defaults changed), listed under it. */
const EXTEND_FORMS: Record<string, JSONSchema> = { routes: routesExtend, pipelines: pipelinesExtend };

function rows(schema: JSONSchema, prefix: string, out: string[]): void {
  const props = (schema.properties ?? {}) as Record<string, JSONSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  for (const [name, s] of Object.entries(props)) {
    const path = `${prefix}${name}`;
    const dflt = s.default === undefined ? '' : `\`${JSON.stringify(s.default)}\``;
    out.push(`| \`${path}\` | ${typeOf(s)} | ${required.has(name) ? 'yes' : ''} | ${dflt} | ${s.description ?? ''} |`);
    if (schema === rootSchema && EXTEND_FORMS[name]) rows(EXTEND_FORMS[name], `${path}.`, out);
    const items = s.type === 'array' ? (s.items as JSONSchema | undefined) : undefined;
    if (items?.properties) rows(items, `${path}[].`, out);
    const values = s.additionalProperties;
    if (values && typeof values === 'object' && (values as JSONSchema).properties) rows(values as JSONSchema, `${path}.NAME.`, out);
    if (s.properties) rows(s, `${path}.`, out);
  }
}

export function configReference(): string {
  const out = ['## gateway.yaml', '', '| field | type | required | default | meaning |', '|---|---|---|---|---|'];
  rows(rootSchema, '', out);
  out.push('', '## Stages', '', 'Each stage of a route\'s chain, with its options (`{ stage: { option: value } }` in a pipeline).', '');
  out.push(...Object.values(plugins).map((p) => `- [\`${p.name}\`](#${p.name})`), '');
  for (const p of Object.values(plugins)) {
    out.push(`### \`${p.name}\``, '', p.description, '');
    const opts: string[] = [];
    rows(p.schema, '', opts);
    out.push(...(opts.length ? ['| option | type | required | default | meaning |', '|---|---|---|---|---|', ...opts] : ['No options.']), '');
  }
  out.push('## Upstream kinds', '', 'A platform\'s `kind` adds these fields to the platform ([Upstream kinds](upstream-kinds.md)).', '');
  for (const k of Object.values(kinds)) {
    const opts: string[] = [];
    rows(k.schema, `platforms.NAME.`, opts);
    out.push(`### \`${k.name}\``, '', k.description, '', ...(opts.length ? ['| field | type | required | default | meaning |', '|---|---|---|---|---|', ...opts] : ['No fields of its own.']), '');
  }
  out.push('## Credential sources', '', 'An account\'s `credential_source.type` and its fields.', '');
  for (const c of Object.values(credentialSources)) {
    const opts: string[] = [];
    rows(c.schema, 'credential_source.', opts);
    out.push(`### \`${c.name}\``, '', c.description, '', '| field | type | required | default | meaning |', '|---|---|---|---|---|', ...opts, '');
  }
  return out.join('\n');
}

export function withReference(page: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start === -1 || end === -1) throw new Error(`${REFERENCE_FILE} lacks the config-reference markers`);
  return `${page.slice(0, start + BEGIN.length)}\n${configReference()}\n${page.slice(end)}`;
}

if (import.meta.main) {
  if (process.argv.includes('--write')) writeFileSync(REFERENCE_FILE, withReference(readFileSync(REFERENCE_FILE, 'utf8')));
  else console.log(configReference());
}
