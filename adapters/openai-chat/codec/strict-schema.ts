// A JSON Schema made acceptable to OpenAI's strict mode (strict tools and strict json_schema output): every object
// closed (additionalProperties: false) and every property required, with the properties that were optional made
// nullable so the model may still leave them empty. A schema that is already strict comes back unchanged.
import type { JSONSchema } from '../../../core/types.ts';

const isSchema = (v: unknown): v is JSONSchema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The schema that also accepts null: `type` widened where there is one, else anyOf with null. */
function nullable(schema: JSONSchema): JSONSchema {
  const { type } = schema;
  if (typeof type === 'string') return type === 'null' ? schema : { ...schema, type: [type, 'null'] };
  if (Array.isArray(type)) return type.includes('null') ? schema : { ...schema, type: [...type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

const mapValues = (o: JSONSchema, fn: (s: JSONSchema) => JSONSchema): JSONSchema =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, isSchema(v) ? fn(v) : v]));

export function strictSchema(schema: JSONSchema): JSONSchema {
  const out: JSONSchema = { ...schema };
  for (const key of ['items', 'not', 'additionalItems'] as const) if (isSchema(out[key])) out[key] = strictSchema(out[key]);
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((s) => (isSchema(s) ? strictSchema(s) : s));
  }
  for (const key of ['$defs', 'definitions'] as const) if (isSchema(out[key])) out[key] = mapValues(out[key], strictSchema);
  if (isSchema(out.properties)) {
    const required = new Set(Array.isArray(out.required) ? out.required as string[] : []);
    const properties = out.properties;
    out.properties = Object.fromEntries(Object.entries(properties).map(([name, sub]) => {
      if (!isSchema(sub)) return [name, sub];
      const strict = strictSchema(sub);
      return [name, required.has(name) ? strict : nullable(strict)];
    }));
    out.required = Object.keys(properties);
  }
  if (out.type === 'object' || isSchema(out.properties)) out.additionalProperties = false;
  return out;
}
