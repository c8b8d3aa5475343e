// JSON Schema of gateway.yaml; every property carries a description (the README's config reference is built from them).
import type { JSONSchema } from './types.ts';

const str = (description: string, extra: JSONSchema = {}): JSONSchema => ({ type: 'string', description, ...extra });
const int = (description: string, extra: JSONSchema = {}): JSONSchema => ({ type: 'integer', description, ...extra });
const globs = (description: string): JSONSchema => ({ type: 'array', description, items: { type: 'string', minLength: 1 } });
const modelMap: JSONSchema = {
  type: 'object', description: 'Aliases: the model a client names → the model sent upstream.',
  additionalProperties: { type: 'string', minLength: 1 },
};
const stageList: JSONSchema = {
  type: 'array', minItems: 1,
  description: 'Stages in order. Each item is a stage name, or a one-key map { name: { options } }.',
  items: {
    anyOf: [
      { type: 'string', minLength: 1 },
      { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: { type: ['object', 'null'] } },
    ],
  },
};

const account: JSONSchema = {
  type: 'object', additionalProperties: false, required: ['id'],
  description: 'One upstream account (credential) of the group.',
  properties: {
    id: str('Stable account id, used in logs, metrics and usage records.', { minLength: 1 }),
    credential: str('Upstream API key or token. Empty disables the account (with one warning).'),
    priority: int('Lower is tried first.', { default: 1 }),
    weight: int('Share among accounts of equal priority.', { minimum: 1, default: 1 }),
    concurrency: int('Requests in flight at once on this account.', { minimum: 1, default: 8 }),
    base_url: str('Overrides the platform base_url for this account.'),
    models: globs('Subset of the group models this account serves (globs); default all.'),
    model_map: modelMap,
    disabled: { type: 'boolean', description: 'Take the account out of service.', default: false },
  },
};

export const rootSchema: JSONSchema = {
  type: 'object', additionalProperties: false, required: ['routes'],
  properties: {
    server: {
      type: 'object', additionalProperties: false, description: 'Listener settings.',
      properties: {
        host: str('Address to listen on.', { default: '0.0.0.0' }),
        port: int('Port to listen on (0 = any free port).', { minimum: 0, maximum: 65535, default: 8080 }),
        workers: { description: 'Worker processes; "auto" = one per core.', anyOf: [{ type: 'integer', minimum: 1 }, { const: 'auto' }], default: 1 },
        body_limit: { description: 'Largest request body accepted, e.g. 32mb, 512kb or a byte count.', anyOf: [{ type: 'string' }, { type: 'integer', minimum: 1 }], default: '32mb' },
      },
    },
    store: {
      type: 'object', additionalProperties: false, description: 'Where counters, limits and usage live.',
      properties: {
        redis: str('Redis URL; empty = embedded in-memory store (single process).', { default: '' }),
        prefix: str('Prefix of every Redis key, so several gateways can share one Redis.', { default: 'gw:' }),
        retention_days: int('Days usage records are kept (daily rollups are kept 400 days, hourly ones 92).', { minimum: 1, default: 30 }),
        records_per_key: int('Usage records kept per key (newest).', { minimum: 1, default: 10_000 }),
        records_total: int('Usage records kept in the global index (newest).', { minimum: 1, default: 100_000 }),
        timeout_ms: int('Redis: longest wait for one store command; past it (or with Redis down) a request gets 503 STORE_UNAVAILABLE, and its usage record is held in memory and written once Redis answers again.', { minimum: 1, default: 2000 }),
      },
    },
    admin: {
      type: 'object', additionalProperties: false, description: 'Operator access.',
      properties: { token: str('Bearer token guarding /admin/*; refused on model routes. Empty disables the admin API.', { default: '' }) },
    },
    platforms: {
      type: 'object', description: 'Upstream kinds, by name.',
      additionalProperties: {
        type: 'object', additionalProperties: false,
        properties: {
          base_url: str('Upstream origin, e.g. https://api.example.com (paths come from the route).'),
          auth: str('How the account credential is sent upstream: bearer, x-api-key or x-goog-api-key. Default: the format\'s own style.'),
          format: {
            description: 'Format(s) this platform serves natively. Default: the formats that name this platform, or every format for a simulator.',
            anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }],
          },
          simulator: { type: 'boolean', description: 'Serve this platform from the built-in simulator on a loopback port.', default: false },
        },
      },
    },
    groups: {
      type: 'object', description: 'Groups of upstream accounts, by name. A key belongs to one group.',
      additionalProperties: {
        type: 'object', additionalProperties: false, required: ['platform'],
        properties: {
          platform: str('Name of a platform in platforms.'),
          models: globs('Models this group serves (globs, e.g. "model-5*"). Empty or absent = none.'),
          model_map: modelMap,
          rate_multiplier: { type: 'number', minimum: 0, description: 'Multiplies the priced cost of every request.', default: 1 },
          dedicated: { type: 'boolean', description: 'Served only on routes that name it as pool, never mixed with ordinary routes.', default: false },
          accounts: { type: 'array', description: 'Upstream accounts, tried in priority order.', items: account },
        },
      },
    },
    keys: {
      type: 'array', description: 'Client API keys declared in config (issued keys live in the store).',
      items: {
        type: 'object', additionalProperties: false, required: ['id', 'group'],
        properties: {
          id: str('Stable key id used in logs and usage (never the key itself).', { minLength: 1 }),
          key: str('The plaintext key (prefer ${VAR} interpolation).'),
          key_sha256: str('Hex SHA-256 of the key, instead of the plaintext.', { pattern: '^[0-9a-fA-F]{64}$' }),
          group: str('Group this key uses.'),
          pools: { type: 'array', items: { type: 'string' }, description: 'Dedicated groups this key may use on pool routes.' },
          models: globs('Narrower allow-list for this key (globs).'),
          limits: {
            type: 'object', additionalProperties: false, description: 'Per-key limits.',
            properties: {
              rpm: int('Requests per minute.', { minimum: 0 }),
              tpm: int('Tokens per minute.', { minimum: 0 }),
              concurrency: int('Requests in flight at once.', { minimum: 0 }),
              quota_usd: { type: 'number', minimum: 0, description: 'Lifetime spend cap in USD (0 = none).' },
              usd_5h: { type: 'number', minimum: 0, description: 'Spend cap per 5-hour window (the window starts at the first spend).' },
              usd_1d: { type: 'number', minimum: 0, description: 'Spend cap per 1-day window.' },
              usd_7d: { type: 'number', minimum: 0, description: 'Spend cap per 7-day window.' },
            },
          },
          expires_at: { description: 'Time after which the key is refused (ISO 8601).', type: ['string'] },
          disabled: { type: 'boolean', description: 'Refuse this key.', default: false },
        },
      },
    },
    pricing: {
      type: 'object', description: 'USD per 1M tokens, by model (globs allowed).',
      additionalProperties: {
        type: 'object', additionalProperties: false,
        properties: {
          input: { type: 'number', minimum: 0, description: 'Input tokens.' },
          output: { type: 'number', minimum: 0, description: 'Output tokens.' },
          cache_read: { type: 'number', minimum: 0, description: 'Cache-read input tokens.' },
          cache_write: { type: 'number', minimum: 0, description: 'Cache-write input tokens (where writes are reported by lifetime: the short-lived ones).' },
          cache_write_1h: { type: 'number', minimum: 0, description: 'Cache-write input tokens kept an hour, where a format reports them apart; default: cache_write.' },
        },
      },
    },
    pipelines: { type: 'object', description: 'Named stage chains that routes refer to.', additionalProperties: stageList },
    routes: {
      type: 'array', minItems: 1, description: 'Every entry point: method + path → format → stages.',
      items: {
        type: 'object', additionalProperties: false, required: ['method', 'path', 'format', 'pipeline'],
        properties: {
          method: str('HTTP method.', { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }),
          path: str('Pattern: literal segments, {name} for one segment (stops at ":"), {name*} for one whole segment (":" included), *name for the rest.'),
          format: str('Wire format adapter of this entry point.'),
          pipeline: { description: 'A pipeline name, or an inline list of stages.', anyOf: [{ type: 'string' }, stageList] },
          pool: str('Dedicated group that alone serves this route.'),
          upstream_path: str('Path sent upstream; {name} (or {name*}) and *name are filled from the route; {model} is the upstream model. Default: the request path.'),
        },
      },
    },
  },
};
