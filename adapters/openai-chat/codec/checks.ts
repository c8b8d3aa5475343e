// Checks on what a chat client sent: every field is hostile until its type is known. A wrong one is a 400 naming the
// parameter, as OpenAI answers it (code invalid_type / invalid_value / unsupported_value).
import { GatewayError } from '../../../core/errors.ts';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export const invalid = (param: string, message: string, code = 'invalid_value'): GatewayError =>
  new GatewayError(400, code, message, { param });

export const unsupported = (param: string, message: string): GatewayError =>
  new GatewayError(400, 'unsupported_value', message, { param });

export function obj(v: unknown, param: string): Obj {
  if (!isObj(v)) throw invalid(param, `Invalid type for '${param}': expected an object.`, 'invalid_type');
  return v;
}

export function list(v: unknown, param: string): unknown[] {
  if (!Array.isArray(v)) throw invalid(param, `Invalid type for '${param}': expected an array.`, 'invalid_type');
  return v;
}

export function str(v: unknown, param: string): string {
  if (typeof v !== 'string') throw invalid(param, `Invalid type for '${param}': expected a string.`, 'invalid_type');
  return v;
}

/** A string, or undefined when the field is absent or null. */
export const optStr = (v: unknown, param: string): string | undefined => (v === undefined || v === null ? undefined : str(v, param));

/** A number in [min, max] (integer when asked), or undefined when absent or null. */
export function optNum(v: unknown, param: string, min: number, max: number, integer = false): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw invalid(param, `Invalid type for '${param}': expected ${integer ? 'an integer' : 'a number'}.`, 'invalid_type');
  }
  if (v < min || v > max) throw invalid(param, `Invalid '${param}': expected a value between ${min} and ${max}, got ${v}.`);
  return v;
}

export function optBool(v: unknown, param: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(param, `Invalid type for '${param}': expected a boolean.`, 'invalid_type');
  return v;
}

/** One of `allowed`, or undefined when absent or null. */
export function optEnum<T extends string>(v: unknown, param: string, allowed: readonly T[]): T | undefined {
  if (v === undefined || v === null) return undefined;
  if (!allowed.includes(v as T)) throw invalid(param, `Invalid value for '${param}': expected one of ${allowed.map((a) => `'${a}'`).join(', ')}.`);
  return v as T;
}
