// JSON Schema of gateway.yaml; every property carries a description (docs/configuration.md's reference is built from them)
// and every default: the loader's ajv fills them in (a section left out is filled as empty), nothing else defaults.
import { EVENT_NAMES } from './notify/events.ts';
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

/** One kind of credential's throttle (auth_throttle.keys, auth_throttle.admin). */
const throttleRule = (description: string, d: { slow_after: number; block_after: number }): JSONSchema => ({
  type: 'object', additionalProperties: false, default: {}, description,
  properties: {
    slow_after: int('Invalid attempts within window_ms before answers are slowed (0 = never).', { minimum: 0, default: d.slow_after }),
    delay_ms: int('Delay added to the answer per invalid attempt past slow_after, up to max_delay_ms.', { minimum: 0, default: 250 }),
    max_delay_ms: int('Longest delay of one answer.', { minimum: 0, maximum: 60_000, default: 2000 }),
    block_after: int('Invalid attempts within window_ms after which the address\'s invalid attempts are refused with 429 (0 = never).', { minimum: 0, default: d.block_after }),
    window_ms: int('Attempts are counted over this long from the first.', { minimum: 1000, default: 600_000 }),
    block_ms: int('How long an address stays refused.', { minimum: 1000, default: 900_000 }),
  },
});

const account: JSONSchema = {
  type: 'object', additionalProperties: false, required: ['id'],
  description: 'One upstream account (credential) of the group.',
  properties: {
    id: str('Stable account id, used in logs, metrics and usage records.', { minLength: 1 }),
    credential: str('Upstream API key or token (prefer ${VAR}, read once at start). Empty disables the account (with one warning).'),
    credential_source: {
      type: 'object', required: ['type'], additionalProperties: true,
      description: 'A credential obtained and refreshed by the gateway instead of a static one (docs/upstream-kinds.md): `type` names the source (oauth2-client-credentials, oauth2-refresh-token, google-service-account, aws), its other fields are the source\'s (a token URL, a client id and secret, a service-account key, AWS keys: prefer ${VAR}). Tokens are cached per account and refreshed before they expire; a failed refresh cools the account with reason `credential`.',
      properties: { type: str('The credential source.', { minLength: 1 }) },
    },
    credential_file: str('File holding the credential instead (a Kubernetes or Docker secret), relative to this file\'s folder: read at start and again at every reload (SIGHUP), surrounding whitespace trimmed. Empty or unreadable refuses the config.', { minLength: 1 }),
    priority: int('Lower is tried first.', { default: 1 }),
    weight: int('Share among accounts of equal priority.', { minimum: 1, default: 1 }),
    concurrency: int('Requests in flight at once on this account; none declared: no cap (the upstream\'s own 429s cool the account down).', { minimum: 1 }),
    base_url: str('Overrides the platform base_url for this account.'),
    models: globs('Subset of the group models this account serves (globs); default all.'),
    model_map: modelMap,
    disabled: { type: 'boolean', description: 'Take the account out of service.', default: false },
  },
};

export const rootSchema: JSONSchema = {
  type: 'object', additionalProperties: false,
  properties: {
    server: {
      type: 'object', additionalProperties: false, description: 'Listener settings.', default: {},
      properties: {
        host: str('Address to listen on.', { default: '0.0.0.0' }),
        port: int('Port to listen on (0 = any free port).', { minimum: 0, maximum: 65535, default: 8080 }),
        workers: { description: 'Worker processes; "auto" = one per core. More than one needs store.redis (the embedded store\'s file belongs to one process) or store.path ":memory:".', anyOf: [{ type: 'integer', minimum: 1 }, { const: 'auto' }], default: 1 },
        body_limit: { description: 'Largest request body accepted, e.g. 32mb, 512kb or a byte count.', anyOf: [{ type: 'string' }, { type: 'integer', minimum: 1 }], default: '32mb' },
        max_connections: int('Client connections held open at once (per process); past it new connections are refused (0 = no cap).', { minimum: 0, default: 10_000 }),
        headers_timeout_ms: int('Longest wait for a request\'s headers, from the connection\'s first byte (or its opening); past it the connection closes (slow or idle clients).', { minimum: 1000, default: 20_000 }),
        request_timeout_ms: int('Longest wait for a whole request, headers and body; past it 408 and the connection closes (streamed answers are not bounded by it).', { minimum: 1000, default: 300_000 }),
        keepalive_timeout_ms: int('How long an idle keep-alive connection is held for its next request.', { minimum: 1000, default: 65_000 }),
        trusted_proxies: {
          type: 'array', items: { type: 'string', minLength: 1 }, default: [],
          description: 'Proxies in front of the gateway (addresses or CIDR ranges: 10.0.0.0/8, fd00::/8): a request from one of them comes from the address its X-Forwarded-For names last that is not itself a trusted proxy. Empty: the peer\'s own address, and X-Forwarded-For is never believed. Read by the logs\' client and auth_throttle.',
        },
        cors: {
          type: 'object', additionalProperties: false, default: {},
          description: 'Browser apps on other origins that call the model routes directly (never /admin/*): preflights answered, CORS headers set.',
          properties: {
            origins: {
              type: 'array', items: { type: 'string', minLength: 1 }, default: [],
              description: 'Origins allowed, exactly as browsers send them (https://app.example.com, no path), or "*" for any. Empty: none.',
            },
          },
        },
      },
    },
    store: {
      type: 'object', additionalProperties: false, description: 'Where counters, limits and usage live.', default: {},
      properties: {
        redis: str('Redis URL (every gateway process shares it); empty = the embedded store of one process, kept in path.', { default: '' }),
        path: str('Embedded store (no redis): its SQLite file, relative to this file\'s folder. Issued keys, quotas, spend windows, rate counters, usage and account bindings survive a restart; a kill -9 loses at most the last second of usage and account state (key changes are written before they are answered). Needs workers: 1. ":memory:" keeps nothing.', { default: './data/gateway.db', minLength: 1 }),
        prefix: str('Prefix of every Redis key, so several gateways can share one Redis.', { default: 'gw:' }),
        retention_days: int('Days usage records are kept (daily rollups are kept 400 days, hourly ones 92).', { minimum: 1, default: 30 }),
        records_per_key: int('Usage records kept per key (newest).', { minimum: 1, default: 10_000 }),
        records_total: int('Usage records kept in the global index (newest).', { minimum: 1, default: 100_000 }),
        timeout_ms: int('Redis: longest wait for one store command; past it (or with Redis down) a request gets 503 STORE_UNAVAILABLE, and its usage record is held in memory and written once Redis answers again.', { minimum: 1, default: 2000 }),
      },
    },
    admin: {
      type: 'object', additionalProperties: false, description: 'Operator access.', default: {},
      properties: { token: str('Bearer token guarding /admin/*; refused on model routes. At least 32 characters, no spaces, no key\'s secret (`openssl rand -hex 32`); empty disables the admin API.', { default: '' }) },
    },
    auth_throttle: {
      type: 'object', additionalProperties: false, default: {},
      description: 'Invalid credentials from one client address (see server.trusted_proxies), per process: past slow_after within window_ms each answer is delayed, past block_after the address\'s invalid attempts get 429 for block_ms (logged once, counted in gateway_auth_throttle_total). A valid key or token is never slowed or refused.',
      properties: {
        keys: throttleRule('Invalid model API keys (stage auth); refused in the client\'s own error format.', { slow_after: 10, block_after: 30 }),
        admin: throttleRule('Invalid admin tokens (stage admin-auth); refused in the admin API\'s format.', { slow_after: 3, block_after: 10 }),
        max_addresses: int('Client addresses tracked at once (IPv6 by /64); past it the least recently seen is forgotten.', { minimum: 100, default: 10_000 }),
      },
    },
    notifications: {
      type: 'object', additionalProperties: false, default: {},
      description: 'Webhooks called when something needs an operator (docs/alerts.md): signed JSON POSTs, queued and retried, never in a request\'s way.',
      properties: {
        webhooks: {
          type: 'array', default: [], description: 'Receivers, each with the events it takes.',
          items: {
            type: 'object', additionalProperties: false, required: ['url', 'secret'],
            properties: {
              name: str('Its name in logs, metrics and the console. Default: the URL\'s host.', { pattern: '^[A-Za-z0-9._:-]{1,64}$' }),
              url: str('Where events are POSTed (http or https). It may hold the receiver\'s own token: only its host is ever shown.', { minLength: 1 }),
              secret: str('Key of the HMAC-SHA256 signature of each body (header `x-gateway-signature: sha256=<hex>`); 16 characters or more, e.g. ${WEBHOOK_SECRET}. Never sent, logged or shown.', { minLength: 1 }),
              events: {
                type: 'array', uniqueItems: true, minItems: 1, items: { type: 'string', enum: EVENT_NAMES }, default: EVENT_NAMES,
                description: `Events sent to it: ${EVENT_NAMES.join(', ')}. Default: all.`,
              },
            },
          },
        },
        timeout_ms: int('Longest wait for a receiver\'s answer to one attempt.', { minimum: 100, default: 5000 }),
        retries: int('Attempts after a first that failed (no answer, a timeout, 408, 425, 429 or 5xx), each after twice the wait before it; any other status ends the delivery.', { minimum: 0, maximum: 20, default: 5 }),
        retry_ms: int('Wait before the first retry.', { minimum: 10, default: 1000 }),
        queue_limit: int('Deliveries waiting, being sent or retried at once (per process); past it a new one is dropped and counted.', { minimum: 1, default: 1000 }),
        quota_percents: {
          type: 'array', uniqueItems: true, minItems: 1, items: { type: 'number', exclusiveMinimum: 0, maximum: 100 }, default: [80, 100],
          description: 'key.quota: the shares (in %) of quota_usd and of each USD window at which a key is reported.',
        },
        history: int('Deliveries kept for the console (GET /admin/notifications), newest first.', { minimum: 1, maximum: 10_000, default: 200 }),
      },
    },
    platforms: {
      type: 'object', description: 'Upstream kinds, by name.', default: {},
      additionalProperties: {
        type: 'object', additionalProperties: false,
        properties: {
          base_url: str('Upstream origin, e.g. https://api.example.com (paths come from the route). A kind may derive it (vertex, bedrock: from region).'),
          kind: str('The upstream kind, one of adapters/kinds/ (docs/upstream-kinds.md lists them); it maps paths, authenticates and adds its own fields to the platform. Default: none, a first-party API.'),
          simulator_token_ttl_ms: int('simulator: true: lifetime of the tokens the simulator\'s token endpoint issues (tests of refreshing credentials).', { minimum: 100 }),
          auth: str('How the account credential is sent upstream: bearer, x-api-key, x-goog-api-key, api-key or none (a server that takes no credential: its accounts need none). Default: the kind\'s, else the format\'s own style.'),
          format: {
            description: 'Format(s) this platform serves natively. Default: the formats that name this platform, or every format for a simulator.',
            anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, minItems: 1 }],
          },
          simulator: { type: 'boolean', description: 'Serve this platform from the built-in simulator on a loopback port.', default: false },
          forward_headers: {
            type: 'array', default: [], items: { type: 'string', pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$' },
            description: 'Request headers a client may send to this platform besides those its format passes (names; a trailing * matches a prefix). Every other client header is dropped.',
          },
        },
      },
    },
    groups: {
      type: 'object', description: 'Groups of upstream accounts, by name. A key belongs to one group.', default: {},
      additionalProperties: {
        type: 'object', additionalProperties: false, required: ['platform'],
        properties: {
          platform: str('Name of a platform in platforms.'),
          models: { ...globs('Models this group serves (globs, e.g. "model-5*"). Empty or absent = none.'), default: [] },
          model_map: { ...modelMap, default: {} },
          rate_multiplier: { type: 'number', minimum: 0, description: 'Multiplies the priced cost of every request.', default: 1 },
          dedicated: { type: 'boolean', description: 'Served only on routes that name it as pool, never mixed with ordinary routes.', default: false },
          client_formats: { type: 'array', items: { type: 'string' }, description: 'Client formats this group accepts: native ones are relayed byte for byte, others translated (docs/translation.md). Default: every format; a format left out gets the native 400 FORMAT_NOT_SUPPORTED.' },
          upstream_format: str('Format translated requests are sent in: one of the platform\'s formats with a codec. Default: the first such format of the platform.'),
          default_max_tokens: int('max_tokens of a translated request that names none, where the upstream format requires one.', { minimum: 1, default: 8192 }),
          conversation_ttl_ms: int('How long the gateway keeps a translated Responses conversation (previous_response_id, GET /v1/responses/{id}) when the upstream cannot keep it.', { minimum: 1000, default: 604_800_000 }),
          accounts: { type: 'array', description: 'Upstream accounts, tried in priority order.', items: account, default: [] },
          fallback: {
            type: 'array', items: { type: 'string', minLength: 1 }, default: [],
            description: 'Groups that serve a request, in this order, when no account of this one can (none enabled for the model, all cooling down, or all failed with 429/5xx before the first byte); a dedicated group only for keys that list it in pools; only groups whose models include the request\'s, translating where their platform speaks another format. The serving group\'s model_map and rate_multiplier apply; the record names the groups it fell back from.',
          },
        },
      },
    },
    keys: {
      type: 'array', description: 'Client API keys declared in config (issued keys live in the store).', default: [],
      items: {
        type: 'object', additionalProperties: false, required: ['id', 'group'],
        properties: {
          id: str('Stable key id used in logs and usage (never the key itself).', { minLength: 1 }),
          key: str('The plaintext key (prefer ${VAR} interpolation).'),
          key_sha256: str('Hex SHA-256 of the key, instead of the plaintext.', { pattern: '^[0-9a-fA-F]{64}$' }),
          group: str('Group this key uses.'),
          pools: { type: 'array', items: { type: 'string' }, description: 'Dedicated groups this key may use on pool routes.', default: [] },
          models: globs('Narrower allow-list for this key (globs).'),
          limits: {
            type: 'object', additionalProperties: false, description: 'Per-key limits.', default: {},
            properties: {
              rpm: int('Requests per minute.', { minimum: 0 }),
              tpm: int('Tokens per minute.', { minimum: 0 }),
              concurrency: int('Requests in flight at once.', { minimum: 0 }),
              quota_usd: { type: 'number', minimum: 0, description: 'Lifetime spend cap in USD (0 = none). Like the windows, it counts what requests in flight hold (rate-limit).' },
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
      type: 'object', description: 'USD per 1M tokens, by model (globs allowed).', default: {},
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
    pipelines: {
      type: 'object', additionalProperties: stageList, default: {},
      description: 'Named stage chains that routes refer to. Absent: the defaults file\'s; a map replaces them; { extends: default, add, remove } changes them (pipelines.extends below).',
    },
    routes: {
      type: 'array', minItems: 1,
      description: 'Every entry point: method + path → format → stages. Absent: the defaults file\'s; a list replaces them; { extends: default, add, remove } changes them (routes.extends below).',
      items: {
        type: 'object', additionalProperties: false, required: ['method', 'path', 'format', 'pipeline'],
        properties: {
          method: str('HTTP method.', { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }),
          path: str('Pattern: literal segments, {name} for one segment (stops at ":"), {name*} for one whole segment (":" included), *name for the rest.'),
          format: str('Wire format adapter of this entry point.'),
          pipeline: { description: 'A pipeline name, or an inline list of stages.', anyOf: [{ type: 'string' }, stageList] },
          pool: str('Dedicated group that alone serves this route.'),
          upstream_path: str('Path sent upstream; {name} (or {name*}) and *name are filled from the route, each segment percent-encoded; {model} is the upstream model. Default: the route\'s own path pattern.'),
          params: {
            type: 'object', additionalProperties: { type: 'string', minLength: 1 },
            description: 'What a capture may be: a regular expression per parameter name, matched against the whole decoded value (e.g. subpath: "resp_\\w+(/cancel)?"); a request breaking it is a 404.',
          },
          billed: { type: 'boolean', default: true, description: 'false: answers of this route are not billed requests (e.g. token counting): metering records no usage, request or spend for them; rate limits still apply.' },
        },
      },
    },
  },
};

const extendsDefault: JSONSchema = { const: 'default', description: 'The defaults file shipped with the gateway (app/defaults.yaml), the only one.' };

/** routes: { extends: default, add, remove }: the default routes changed; `add`'s routes are checked as routes once merged. */
export const routesExtend: JSONSchema = {
  type: 'object', additionalProperties: false, required: ['extends'],
  properties: {
    extends: extendsDefault,
    add: {
      type: 'array', items: { type: 'object' }, default: [],
      description: 'Routes added after the default ones (patterns are tried in order); one with the method and path of a default route takes its place.',
    },
    remove: {
      type: 'array', items: { type: 'string', minLength: 1 }, default: [],
      description: 'Default routes left out: "/path" (every method of that path) or "METHOD /path". One that names no default route is an error.',
    },
  },
};

/** pipelines: { extends: default, add, remove }: the default pipelines changed. A pipeline cannot be named `extends`. */
export const pipelinesExtend: JSONSchema = {
  type: 'object', additionalProperties: false, required: ['extends'],
  properties: {
    extends: extendsDefault,
    add: { type: 'object', additionalProperties: stageList, default: {}, description: 'Pipelines added; one named as a default pipeline takes its place.' },
    remove: { type: 'array', items: { type: 'string', minLength: 1 }, default: [], description: 'Default pipelines left out, by name. One that names no default pipeline is an error.' },
  },
};
