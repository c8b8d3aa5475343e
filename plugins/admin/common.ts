// What the admin stages share: JSON answers, body validation, time parsing, and the public view of a key (never its secret or hash).
import { Ajv, type ValidateFunction } from 'ajv';
import { coreErrors } from '../../core/errors.ts';
import { adminErrors } from './errors.ts';
import type { Ctx, Env, JSONSchema, KeyConfig } from '../../core/types.ts';
import type { IssuedKey } from '../../core/store/types.ts';
import { usageView } from '../usage.ts';
import { sendJson } from '../../core/reply.ts';

export type Source = 'config' | 'store';
export interface FoundKey { key: KeyConfig | IssuedKey; source: Source }

export function reply(ctx: Ctx, status: number, body: unknown): void {
  ctx.end('completed');
  sendJson(ctx.res, status, body, { 'cache-control': 'no-store' });
}

const ajv = new Ajv({ allErrors: true, strict: false });

export const limitsSchema: JSONSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    rpm: { type: 'integer', minimum: 0 }, tpm: { type: 'integer', minimum: 0 }, concurrency: { type: 'integer', minimum: 0 },
    quota_usd: { type: 'number', minimum: 0 }, usd_5h: { type: 'number', minimum: 0 }, usd_1d: { type: 'number', minimum: 0 }, usd_7d: { type: 'number', minimum: 0 },
  },
};

/** A validator for a JSON request body that reports every problem in one 400. */
export function bodyValidator(schema: JSONSchema): (ctx: Ctx) => Promise<Record<string, unknown>> {
  const validate: ValidateFunction = ajv.compile(schema);
  return async (ctx) => {
    const body = await ctx.json();
    if (validate(body)) return body;
    const problems = (validate.errors ?? []).map((e) => {
      const at = e.instancePath.slice(1).replace(/\//g, '.') || 'body';
      const extra = (e.params as { additionalProperty?: string }).additionalProperty;
      return extra ? `${at}: unknown field "${extra}"` : `${at}: ${e.message}`;
    });
    throw coreErrors.invalid_body({ kind: 'invalid', detail: problems.join('; ') });
  };
}

/** An ISO 8601 time or epoch milliseconds (as number or digits) → epoch ms. */
export function parseTime(value: unknown, name: string): number {
  const ms = typeof value === 'number' ? value : /^\d+$/.test(String(value)) ? Number(value) : Date.parse(String(value));
  if (!Number.isFinite(ms)) throw adminErrors.invalid_time(`${name} must be an ISO 8601 time or epoch milliseconds`, { param: name });
  return ms;
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * The operator's view of a key: everything but its secret and its hash, with its status, spend and limits computed as
 * /v1/usage computes them (usageView) — disabled first, as auth refuses a disabled key before anything else — and when
 * it was last used (its newest record kept).
 */
export async function keyView({ key, source }: FoundKey, env: Env, now = Date.now()) {
  const [usage, newest] = await Promise.all([env.store.keyUsage(key.id, { days: 1, now }), env.store.records({ key: key.id, limit: 1 })]);
  const view = usageView(key, key.group, usage, now);
  return {
    id: key.id, name: (key as IssuedKey).name ?? null, source, group: key.group, pools: key.pools, models: key.models ?? null,
    limits: key.limits, expires_at: iso(key.expires_at), disabled: key.disabled,
    status: key.disabled ? 'disabled' : view.status,
    /** False when refused now: disabled, expired, out of quota or a spend window used up. */
    usable: !key.disabled && view.isValid,
    spent: view.usage.total.cost, quota: view.quota ?? null, rate_limits: view.rate_limits ?? [],
    today: { requests: view.usage.today.requests, cost: view.usage.today.cost },
    last_used: iso(newest.records[0]?.time),
    created_at: iso((key as IssuedKey).created_at),
  };
}

/** Config keys first (they win on a clash of ids), then the store's issued keys. */
export async function findKey(env: Env, id: string): Promise<FoundKey | undefined> {
  const config = env.config.keys.find((k) => k.id === id);
  if (config) return { key: config, source: 'config' };
  const issued = (await env.store.listKeys()).find((k) => k.id === id);
  return issued && { key: issued, source: 'store' };
}

export async function requireKey(env: Env, id: string): Promise<FoundKey> {
  const found = await findKey(env, id);
  if (!found) throw adminErrors.key_not_found(id, { param: 'id' });
  return found;
}

export const configKeyImmutable = (id: string) =>
  adminErrors.config_key_immutable(id);
