// Reading a Gemini client's body field by field: proto-JSON names in camelCase or snake_case, and every wrong shape a
// 400 that names the field (contents[2].parts[0].functionCall), never a TypeError.
import { GatewayError } from '../../../core/errors.ts';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A request the codec refuses as malformed; `param` is the field's path. */
export const invalid = (message: string, param: string): GatewayError =>
  new GatewayError(400, 'invalid_body', `${param}: ${message}`, { param });

/** Something the other side cannot honour and that must not be dropped silently (a server tool, a cached content). */
export const untranslatable = (message: string, param: string): GatewayError =>
  new GatewayError(400, 'not_translatable', message, { param });

const snakeOf = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Proto-JSON takes a field by its camelCase or its snake_case name (Google's own curl samples use snake_case). */
export function field(o: Obj, camel: string): unknown {
  const value = o[camel];
  return value === undefined || value === null ? o[snakeOf(camel)] ?? undefined : value;
}

/** Whether the object sets the field under either name. */
export const has = (o: Obj, camel: string): boolean => field(o, camel) !== undefined;

export function optObj(v: unknown, param: string): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw invalid('must be an object', param);
  return v;
}

export function optList(v: unknown, param: string): unknown[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid('must be a list', param);
  return v;
}

export function optStr(v: unknown, param: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid('must be a string', param);
  return v;
}

export function optNum(v: unknown, param: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid('must be a number', param);
  return v;
}

export function optInt(v: unknown, param: string): number | undefined {
  // Proto-JSON writes int64 as a string; int32 fields take either.
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : optNum(v, param);
  if (n !== undefined && !Number.isInteger(n)) throw invalid('must be an integer', param);
  return n;
}

export function optBool(v: unknown, param: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid('must be true or false', param);
  return v;
}
