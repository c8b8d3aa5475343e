// Reading a client's Messages body field by field: every wrong shape is a 400 naming the field, never a TypeError.
import { GatewayError } from '../../../core/errors.ts';

export type Obj = Record<string, unknown>;

/** A request the codec refuses, in the client's terms: `param` is the field's path (messages.2.content.0). */
export const invalid = (message: string, param: string): GatewayError =>
  new GatewayError(400, 'invalid_body', `${param}: ${message}`, { param });

/** Something the target cannot honour and must not silently drop (a server tool, a second answer). */
export const untranslatable = (message: string, param: string): GatewayError =>
  new GatewayError(400, 'not_translatable', message, { param });

export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function obj(v: unknown, param: string): Obj {
  if (!isObj(v)) throw invalid('must be an object', param);
  return v;
}

export function list(v: unknown, param: string): unknown[] {
  if (!Array.isArray(v)) throw invalid('must be a list', param);
  return v;
}

export function str(v: unknown, param: string): string {
  if (typeof v !== 'string') throw invalid('must be a string', param);
  return v;
}

export function optStr(v: unknown, param: string): string | undefined {
  return v === undefined || v === null ? undefined : str(v, param);
}

export function optNum(v: unknown, param: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid('must be a number', param);
  return v;
}

export function optInt(v: unknown, param: string): number | undefined {
  const n = optNum(v, param);
  if (n !== undefined && !Number.isInteger(n)) throw invalid('must be an integer', param);
  return n;
}
