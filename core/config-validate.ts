// The config's validators: one ajv (interpolated strings coerced, the schemas' defaults filled in), the root schema's
// and each stage's own, and how an ajv error reads as a problem of the file.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { pipelinesExtend, rootSchema, routesExtend } from './config-schema.ts';
import type { Plugin } from './types.ts';

export type Path = (string | number)[];
export type Problem = (path: Path, message: string, onKey?: boolean) => void;

// coerceTypes: interpolated values are strings ("${PORT:-8080}"); the schema decides what they become.
const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, verbose: true, strict: false });
export const validateRoot = ajv.compile(rootSchema);
export const validateRoutesExtend = ajv.compile(routesExtend);
export const validatePipelinesExtend = ajv.compile(pipelinesExtend);
const stageValidators = new WeakMap<Plugin, ValidateFunction>();

/** A stage's options checked (and given their defaults) by its plugin's schema; each problem reported at `path`. */
export function validateStage(plugin: Plugin, options: unknown, path: Path, problem: Problem): void {
  let validate = stageValidators.get(plugin);
  if (!validate) stageValidators.set(plugin, validate = ajv.compile(plugin.schema));
  if (!validate(options)) for (const e of validate.errors ?? []) reportAjv(e, path, (p, m, k) => problem(p, `${m} (stage ${plugin.name})`, k));
}

const optionValidators = new WeakMap<object, ValidateFunction>();

/** Options checked (and given their defaults) by a schema of their own (a kind's, a credential source's), at `path`. */
export function validateOptions(schema: object, options: unknown, path: Path, problem: Problem): void {
  let validate = optionValidators.get(schema);
  if (!validate) optionValidators.set(schema, validate = ajv.compile(schema));
  if (!validate(options)) for (const e of validate.errors ?? []) reportAjv(e, path, problem);
}

export function reportAjv(e: ErrorObject, base: Path, problem: Problem): void {
  if (e.schemaPath.includes('/anyOf/')) return; // the anyOf error itself says it better
  const path = [...base, ...e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))];
  const p = e.params as Record<string, any>;
  switch (e.keyword) {
    case 'additionalProperties': return problem([...path, p.additionalProperty], `unknown field "${p.additionalProperty}"`, true);
    case 'required': return problem(path, `missing required field "${p.missingProperty}"`);
    case 'enum': return problem(path, `must be one of ${(p.allowedValues as unknown[]).join(', ')}`);
    case 'const': return problem(path, `must be ${JSON.stringify(p.allowedValue)}`);
    case 'anyOf': return problem(path, `must be ${String((e.parentSchema as any)?.description ?? 'a valid value').replace(/\.$/, '').toLowerCase()}`);
    default: return problem(path, e.message ?? 'is invalid');
  }
}
