// Reading a client's Responses body: every field is checked before use, and a bad one is a 400 naming its param.
import { GatewayError } from '../../../core/errors.ts';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export const invalid = (param: string, message: string, code = 'invalid_value') =>
  new GatewayError(400, code, message, { param });

/** Something the client asked that only OpenAI itself can do: refused rather than silently dropped. */
export const unsupported = (param: string, message: string) => invalid(param, message, 'unsupported_parameter');

export function optString(v: unknown, param: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(param, `Invalid type for '${param}': expected a string.`, 'invalid_type');
  return v;
}

export function reqString(v: unknown, param: string): string {
  const s = optString(v, param);
  if (s === undefined) throw invalid(param, `Missing required parameter: '${param}'.`, 'missing_required_parameter');
  return s;
}

export function optNumber(v: unknown, param: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(param, `Invalid type for '${param}': expected a number.`, 'invalid_type');
  return v;
}

export function optBool(v: unknown, param: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(param, `Invalid type for '${param}': expected a boolean.`, 'invalid_type');
  return v;
}

export function optObject(v: unknown, param: string): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw invalid(param, `Invalid type for '${param}': expected an object.`, 'invalid_type');
  return v;
}

export function optArray(v: unknown, param: string): unknown[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(param, `Invalid type for '${param}': expected an array.`, 'invalid_type');
  return v;
}

/** An element of a list that must be an object. */
export function objectAt(v: unknown, param: string): Obj {
  if (!isObj(v)) throw invalid(param, `Invalid type for '${param}': expected an object.`, 'invalid_type');
  return v;
}
