// Schemas both ways: JSON Schema → the OpenAPI subset Gemini's `parameters` takes, and Gemini's OpenAPI schemas (upper-case
// types, `nullable`) → JSON Schema for other targets.
import type { JSONSchema } from '../../../core/types.ts';
import { isObj, type Obj } from './read.ts';

/** Keywords Gemini's Schema proto has, besides those rewritten below (simulator/strict/gemini-proto.ts, v1beta reference). */
const KEPT = new Set(['type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'default', 'minimum', 'maximum', 'propertyOrdering']);

/** The formats Gemini takes per type; any other is dropped (it refuses e.g. `uri` on a STRING). */
const FORMATS: Record<string, string[]> = { string: ['enum', 'date-time'], number: ['float', 'double'], integer: ['int32', 'int64'] };

/** A $ref that points back into itself cannot be inlined: the caller sends such a schema as parametersJsonSchema. */
export class RecursiveSchema extends Error {}

/**
 * JSON Schema → Gemini's OpenAPI subset: $ref/$defs inlined, const → a one-value enum, type lists → type + nullable (or
 * anyOf), oneOf → anyOf, exclusive bounds → inclusive ones, and whatever the proto has no field for dropped
 * ($schema, additionalProperties, propertyNames, uniqueItems, patternProperties, if/then/else …).
 */
export function toOpenApi(schema: JSONSchema): JSONSchema {
  const defs = { ...(isObj(schema.definitions) ? schema.definitions : {}), ...(isObj(schema.$defs) ? schema.$defs : {}), '#': schema };
  return convert(schema, defs, []);
}

function convert(schema: unknown, defs: Obj, refs: string[]): Obj {
  if (!isObj(schema)) return {};
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (refs.includes(ref)) throw new RecursiveSchema(ref);
    const target = ref === '#' ? '#' : /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)?.[1];
    const { $ref: _ref, ...rest } = schema;
    return convert({ ...(target !== undefined && isObj(defs[target]) ? defs[target] : {}), ...rest }, defs, [...refs, ref]);
  }
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) if (KEPT.has(key)) out[key] = value;
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const];
  if (out.minimum === undefined && typeof schema.exclusiveMinimum === 'number') out.minimum = schema.exclusiveMinimum;
  if (out.maximum === undefined && typeof schema.exclusiveMaximum === 'number') out.maximum = schema.exclusiveMaximum;
  if (out.example === undefined && Array.isArray(schema.examples) && schema.examples.length > 0) out.example = schema.examples[0];
  typeOf(schema, out, defs, refs);
  if (isObj(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, convert(v, defs, refs)]));
    if (Array.isArray(out.required)) out.required = out.required.filter((k) => typeof k === 'string' && k in (out.properties as Obj));
  }
  const items = Array.isArray(schema.items) ? schema.items[0] : schema.items ?? (Array.isArray(schema.prefixItems) ? schema.prefixItems[0] : undefined);
  if (isObj(items)) out.items = convert(items, defs, refs);
  const choices = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (choices) alternatives(choices, out, defs, refs);
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) mergeInto(out, convert(part, defs, refs));
  return fitEnumAndFormat(out);
}

/** A type list: one type plus "null" is that type, nullable; several become anyOf. */
function typeOf(schema: Obj, out: Obj, defs: Obj, refs: string[]): void {
  if (!Array.isArray(schema.type)) return;
  const types = schema.type.filter((t): t is string => typeof t === 'string');
  const real = types.filter((t) => t !== 'null');
  if (real.length < types.length) out.nullable = true;
  if (real.length === 1) out.type = real[0];
  else if (real.length === 0) out.type = 'null';
  else {
    delete out.type;
    out.anyOf = real.map((type) => convert({ ...schema, type }, defs, refs));
  }
}

/** anyOf/oneOf: a {type: "null"} member becomes nullable; a single remaining member is merged in. */
function alternatives(choices: unknown[], out: Obj, defs: Obj, refs: string[]): void {
  const members = choices.map((c) => convert(c, defs, refs));
  const real = members.filter((m) => m.type !== 'null');
  if (real.length < members.length) out.nullable = true;
  if (real.length === 1) mergeInto(out, real[0]);
  else if (real.length > 1) out.anyOf = real;
}

function mergeInto(out: Obj, part: Obj): void {
  for (const [key, value] of Object.entries(part)) {
    if (key === 'properties' && isObj(out.properties) && isObj(value)) out.properties = { ...out.properties, ...value };
    else if (key === 'required' && Array.isArray(out.required) && Array.isArray(value)) out.required = [...new Set([...out.required, ...value])];
    else if (out[key] === undefined) out[key] = value;
  }
}

/** Gemini takes enums of strings only: others move into the description. Unknown formats are dropped. */
function fitEnumAndFormat(out: Obj): Obj {
  if (Array.isArray(out.enum) && !out.enum.every((v) => typeof v === 'string')) {
    const allowed = `Allowed values: ${out.enum.map((v) => JSON.stringify(v)).join(', ')}.`;
    out.description = typeof out.description === 'string' && out.description !== '' ? `${out.description} ${allowed}` : allowed;
    delete out.enum;
  }
  if (out.format !== undefined && !(FORMATS[String(out.type)] ?? []).includes(String(out.format))) delete out.format;
  return out;
}

/** A JSON Schema for parametersJsonSchema / responseJsonSchema: any schema, without the $schema marker Gemini refuses. */
export function withoutMarker(schema: JSONSchema): JSONSchema {
  const { $schema: _marker, ...rest } = schema;
  return rest;
}

/**
 * Gemini's OpenAPI-subset schema → JSON Schema: types in lower case, `nullable` as a type list, `example` as
 * `examples`, `propertyOrdering` (Gemini's own) dropped. What is already JSON Schema passes unchanged.
 */
export function fromOpenApi(schema: unknown): JSONSchema {
  if (!isObj(schema)) return {};
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'propertyOrdering' || key === 'nullable') continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'example') out.examples = [value];
    else if (key === 'properties' && isObj(value)) out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromOpenApi(v)]));
    else if (key === 'items') out.items = fromOpenApi(value);
    else if (key === 'anyOf' && Array.isArray(value)) out.anyOf = value.map(fromOpenApi);
    else out[key] = value;
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: 'null' }];
  }
  return out;
}

/** A function's parameters as other formats need them: always an object schema (Anthropic refuses one without type). */
export function objectSchema(schema: JSONSchema | undefined): JSONSchema {
  if (!schema || Object.keys(schema).length === 0) return { type: 'object', properties: {} };
  return schema.type === undefined ? { type: 'object', ...schema } : schema;
}
