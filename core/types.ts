// Shared types of the engine: config shapes, request context, stages, plugins and format adapters.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Codec, Operation } from './canonical.ts';
import type { ErrorRenderer, GatewayError } from './errors.ts';
import type { JsonPick } from './json-pick.ts';
import type { JSONSchema, Outcome, SseFrame } from './shapes.ts';
import type { Usage } from './usage.ts';
import type { IssuedKey, Store } from './store/types.ts';
import type { EventName, Notify } from './notify/events.ts';

export type { JSONSchema, Outcome, SseFrame };

// ---- config (after interpolation and validation) ----

export interface ServerConfig {
  host: string; port: number; workers: number | 'auto'; body_limit: number;
  max_connections: number; headers_timeout_ms: number; request_timeout_ms: number; keepalive_timeout_ms: number;
  /** Origins whose browser apps may call the model routes (exact, or "*"). */
  cors: { origins: string[] };
  /** Proxies whose X-Forwarded-For is believed (addresses or CIDR ranges, as given). */
  trusted_proxies: string[];
}

/** One kind of credential's throttle (auth_throttle.keys / .admin); 0 turns slowing or blocking off. */
export interface ThrottleRule { slow_after: number; delay_ms: number; max_delay_ms: number; block_after: number; window_ms: number; block_ms: number }

export interface WebhookConfig {
  /** The URL's host unless named: what logs, metrics and the console show (never the URL, which may hold a token). */
  name: string;
  url: string;
  secret: string;
  events: EventName[];
}

export interface NotificationsConfig {
  webhooks: WebhookConfig[];
  timeout_ms: number; retries: number; retry_ms: number; queue_limit: number; quota_percents: number[]; history: number;
}

export interface PlatformConfig {
  name: string;
  base_url?: string;
  auth?: string;
  formats?: string[];
  simulator?: boolean;
  /** Client request headers passed upstream besides the format's own allow list (a simulator's adds its fault headers). */
  forward_headers: string[];
  /** The upstream kind (a key of Env.kinds): where requests go and how they are signed; none for the first-party APIs. */
  kind?: string;
  /** The kind's own fields of this platform, checked and defaulted by the kind's schema. */
  kind_options?: Record<string, unknown>;
  /** A simulator platform: lifetime of the tokens its token endpoint issues. */
  simulator_token_ttl_ms?: number;
}

export interface AccountConfig {
  id: string;
  credential: string;
  enabled: boolean;
  /** Why a disabled account is out of service: `disabled: true`, or no credential (and the ${VAR}s that left it empty). */
  off?: { reason: 'disabled' | 'no_credential'; variables: string[] };
  priority: number;
  weight: number;
  /** Requests in flight at once; UNCAPPED when the account declares none. */
  concurrency: number;
  base_url?: string;
  models?: string[];
  model_map?: Record<string, string>;
  /** A credential obtained and refreshed by a provider (a key of Env.credentialSources) instead of a static secret. */
  source?: CredentialSourceConfig;
}

/** An account's credential_source: the provider's name and its fields (secrets among them: never logged). */
export interface CredentialSourceConfig { type: string; options: Record<string, unknown> }

export interface GroupConfig {
  name: string;
  platform: string;
  models: string[];
  model_map: Record<string, string>;
  rate_multiplier: number;
  dedicated: boolean;
  accounts: AccountConfig[];
  /** Client formats this group accepts, native or translated (undefined: every format). */
  client_formats?: string[];
  /** The format translated requests are sent in (undefined: the platform's first format that has a codec). */
  upstream_format?: string;
  /** max_tokens of a translated request that names none, where the upstream format requires one. */
  default_max_tokens: number;
  /** Translated conversations the upstream cannot keep (a client continuing a response) are kept this long. */
  conversation_ttl_ms: number;
  /** Groups that serve a request, in order, when no account of this one can (plugins/proxy/fallback.ts). */
  fallback: string[];
}

/** A client key as auth sees it: from gateway.yaml, or issued at runtime (an IssuedKey, which adds its own bookkeeping). */
export type KeyConfig = Omit<IssuedKey, 'created_at' | 'name'>;

export interface StageRef { name: string; options: unknown; path: (string | number)[]; malformed?: boolean }

export interface RouteConfig {
  method: string;
  path: string;
  format: string;
  stages: StageRef[];
  pool?: string;
  upstream_path?: string;
  /** Per capture, the regular expression (source) its whole decoded value must match. */
  params?: Record<string, string>;
  /** False where an answer is not a billed request (token counting): metering records nothing, limits still apply. */
  billed: boolean;
}

export interface GatewayConfig {
  file: string;
  server: ServerConfig;
  /** path: absolute (resolved against the config file's folder), or ":memory:". */
  store: { redis: string; path: string; prefix: string; retention_days: number; records_per_key: number; records_total: number; timeout_ms: number };
  admin: { token: string };
  auth_throttle: { keys: ThrottleRule; admin: ThrottleRule; max_addresses: number };
  notifications: NotificationsConfig;
  platforms: Record<string, PlatformConfig>;
  groups: Record<string, GroupConfig>;
  keys: KeyConfig[];
  pricing: Record<string, Record<string, number>>;
  routes: RouteConfig[];
  /** Accounts and keys left out until their optional variables are set (said once at start: startupLines). */
  waiting: Waiting[];
}

/** An account or key whose credential its file takes from variables none of which is set yet. */
export interface Waiting { kind: 'account' | 'key'; id: string; group?: string; variables: string[] }

// ---- request context ----

/** performance.now() marks: arrival, the (last) upstream attempt sent, first byte relayed, the upstream's answer complete, response end. */
export interface Timings { start: number; upstreamStart?: number; firstByte?: number; upstreamEnd?: number; end?: number }

export interface Ctx {
  /** The gateway's own request id (random, per request): the identity of usage records, settlements and leases. */
  id: string;
  /** The client's own request id, when it sent a well-formed one: logged, recorded and echoed, never trusted. */
  clientRequestId?: string;
  req: IncomingMessage;
  res: ServerResponse;
  route: RouteConfig;
  format: FormatAdapter;
  /** The request path as received (no query), and the raw query ('' or '?…'). */
  path: string;
  search: string;
  /** The parsed request URL, built on first use. */
  readonly url: URL;
  params: Record<string, string>;
  log: Logger;
  timings: Timings;
  key?: KeyConfig;
  group?: GroupConfig;
  platform?: PlatformConfig;
  account?: AccountConfig;
  /** Model as the client named it, and as it is sent upstream (after model_map). */
  model?: string;
  upstreamModel?: string;
  /** Set when the group's platform does not speak the client's format: the format the request is translated to. */
  upstreamFormat?: FormatAdapter;
  stream: boolean;
  usage?: Usage;
  /** What a stream relayed of the answer's text, for billing a stream the client left before its final usage. */
  streamed?: StreamedText;
  /** The upstream attempts of a request that needed more than one or failed (account, HTTP status or 0, how it ended). */
  attempts?: Attempt[];
  /** How the exchange ended (also the usage record's ending), as end() decided it. */
  readonly outcome?: Outcome;
  /**
   * Who ended an exchange that failed, when the stage that saw it knows better than the core, which otherwise reads it
   * from the outcome and the error (e.g. an upstream that cut a whole answer short, which the gateway answers with a 502).
   */
  readonly endedBy?: EndedBy;
  /**
   * Say how the request ended, from wherever that was observed: the ending table (core/ending.ts) decides whether it
   * stands over one said before (true when it does). The only way an outcome is written.
   */
  end(outcome: Outcome, by?: EndedBy): boolean;
  /** Run `hook` once the chain has returned or thrown (settle, release, count), before a thrown error is answered. */
  onEnd(hook: EndHook): void;
  /** What the request cost in USD as metered (after the group's multiplier); the request log line carries it. */
  cost?: number;
  /** A variable an earlier stage set (declared by the stages as `provides` / `requires`). */
  get<T>(variable: ContextVar<T>): T | undefined;
  set<T>(variable: ContextVar<T>, value: T | undefined): void;
  body(): Promise<Buffer>;
  json(): Promise<Record<string, unknown>>;
  /** Replace the parsed body (a stage changed it); the proxy then forwards the re-serialized JSON. */
  setJson(value: Record<string, unknown>): void;
  /** Replace the raw body bytes (a non-JSON body a stage rewrote, e.g. a multipart field). */
  setBody(bytes: Buffer): void;
  bodyChanged(): boolean;
}

/** One upstream attempt; `group` names the group it was made in when that is not the one that served (a fallback). */
export interface Attempt { account: string; status: number; reason: string; group?: string }

/**
 * A variable one stage sets on the context for later ones, the way Hono middleware declares its variables: a typed
 * token, made once in the module the stages share, whose `name` is what chains are checked by (Plugin.provides).
 */
export interface ContextVar<T> { readonly name: string; readonly __type?: T }

export type EndedBy = 'client' | 'upstream' | 'gateway';

/** Work a stage does after its request: `thrown` is the error the gateway answers with, if the chain threw. */
export type EndHook = (ctx: Ctx, thrown: GatewayError | undefined) => Promise<void> | void;

export type Next = () => Promise<void>;
export type Stage = (ctx: Ctx, next: Next) => Promise<void>;

// ---- plugins ----

export interface Env {
  config: GatewayConfig;
  metrics: Registry;
  log: Logger;
  formats: Record<string, FormatAdapter>;
  upstreamAuth: Record<string, UpstreamAuthStyle>;
  /** Upstream kinds by name (platforms.*.kind). */
  kinds?: Record<string, UpstreamKind>;
  /** Per process, across reloads: the credentials providers obtain, cached per account and refreshed before they expire. */
  credentials?: CredentialCache;
  keysBySha: Map<string, KeyConfig>;
  store: Store;
  /** The model names this configuration knows (metric labels take only these). */
  models: ModelLabels;
  adminSha?: string;
  /**
   * Called whenever an issued key changes (in any process sharing the store), while this config is the running one.
   * Stages listen here, not on `store.onKeysChanged`: a reload drops these listeners with the stages that added them.
   */
  onKeysChanged(listener: () => void): void;
  /** Aborted when the gateway shuts down and its requests' time is up: stages cut what they still do in the background. */
  closing?: AbortSignal;
  /** The operator's webhooks (core/notify): events go here, queued; absent where a test builds a partial Env. */
  notify?: Notify;
  /** The address a request comes from, by server.trusted_proxies (IPv6 as given; the throttles group it by /64). */
  clientAddress(req: IncomingMessage): string;
  /** Per process, across reloads: invalid credentials counted per client address (auth_throttle). */
  throttles: { keys: CredentialThrottle; admin: CredentialThrottle };
}

/**
 * What an auth stage asks of its throttle when a credential was invalid: how long to wait before answering, or that the
 * address is refused (ms left). A valid credential never asks.
 */
export interface CredentialThrottle {
  failed(address: string): { blockedMs: number } | { delayMs: number };
}

/** The model names a configuration knows (core/model-names.ts): only these label a metric series, others are `other`. */
export interface ModelLabels {
  /** Ids an upstream's model list named (list-models asks it). */
  listed(ids: Iterable<string>): void;
  known(model: string, key?: Pick<KeyConfig, 'models'>): boolean;
  /** A model's metric label: its name when known, else `other`. */
  label(model: string, key?: Pick<KeyConfig, 'models'>): string;
}

/**
 * A stage factory. Its contract with the rest of its chain is declared, and checked when the config loads (a chain
 * whose stage lacks what it requires is refused with FILE:LINE:COL): the context fields and variables it `requires`
 * from earlier stages and `provides` to later ones. `takes` names hand-offs an earlier stage may leave undone for it
 * (the admission: sent with this stage's own first store call).
 */
export interface Plugin<O = any> {
  name: string;
  description: string;
  schema: JSONSchema;
  requires?: readonly string[];
  provides?: readonly string[];
  takes?: readonly string[];
  create(options: O, env: Env, place: StagePlace): Stage;
}

/** Where a stage sits in its route's chain. */
export interface StagePlace {
  /** True when a later stage of the chain takes this hand-off (Plugin.takes). */
  laterTakes(name: string): boolean;
}

// ---- format adapters (implemented in adapters/) ----

/** What a stream scanner decides for one upstream frame. */
export type FrameVerdict = 'pass' | 'drop' | { replace: string };

export interface StreamScanner {
  frame(frame: SseFrame): FrameVerdict;
  usage(): Usage | undefined;
  /** True once the format's terminal event was seen. */
  terminal(): boolean;
  /** An error the upstream reported inside the stream, if any. */
  error(): string | undefined;
  /** True once the answer's content began (text, reasoning or tool-call deltas): an error before it may still fail over. */
  started?(): boolean;
  /** True once the stream said the answer was cut by its output cap (e.g. finish_reason "length", stop_reason "max_tokens"). */
  incomplete?(): boolean;
  /** The answer text relayed so far (see StreamedText); formats whose streams carry no text leave it out. */
  streamed?(): StreamedText;
}

/**
 * Characters of answer text (content, reasoning and tool-argument deltas) a stream relayed to the client, and whether
 * the scanner's usage() already holds the upstream's final output count.
 */
export interface StreamedText { chars: number; outputFinal: boolean }

export interface ModelListEntry { id: string; owner: string }

/**
 * Where a vendor lists the models an account may use, and how to read its answer: formats of one vendor share one
 * (the same object), so a list's identity is its vendor's catalogue.
 */
export interface ModelListUpstream {
  /** Path and query of the first page. */
  path: string;
  /** Headers the vendor requires besides the credential (e.g. a version header). */
  headers?: Record<string, string>;
  /** The model ids on one page of the answer, and the path of the next page when there is one. */
  page(body: unknown): { ids: string[]; next?: string };
}

/** A wire format; its error envelopes (errorBody, streamError) are the ErrorRenderer part, read by core/errors.ts. */
export interface FormatAdapter extends ErrorRenderer<Pick<Ctx, 'get'>> {
  name: string;
  /** Platforms that serve this format natively (simulator platforms serve every format). */
  platforms: string[];
  /** Default upstream auth style (a key of Env.upstreamAuth). */
  upstreamAuth: string;
  /** Where the model is named: a JSON body field, a path parameter, or read by the adapter (e.g. a multipart field). */
  model: { body: string } | { param: string } | { read(ctx: Ctx): Promise<string | undefined>; write?(ctx: Ctx, model: string): Promise<void> };
  /** The request body is JSON: parsed and checked (requestSchema, nesting depth) before any upstream sees it. */
  jsonBody: boolean;
  /** Minimal shape a JSON request body must have; checked once, when the body is first parsed. */
  requestSchema?: JSONSchema;
  /**
   * What crosses the gateway besides the body, as allow lists: request headers a client may send upstream and
   * upstream response headers that reach it (lower-case names; a trailing `*` matches a prefix), and query parameters
   * passed upstream. Everything else is dropped.
   */
  forwardHeaders: string[];
  returnHeaders: string[];
  /** A response header this format's SDK reads the request id from, besides x-request-id: it carries the gateway's id. */
  idHeader?: string;
  forwardQuery: string[];
  /**
   * A request that exercises an account's credential alone, with nothing from any client (GET on this path, with these
   * headers): when an upstream refuses a request with 401/403, it tells the credential's failure from the request's.
   */
  credentialCheck?: { path: string; headers?: Record<string, string> };
  isStream(body: Record<string, unknown> | undefined, ctx: Ctx): boolean;
  /** Adjust the request body for upstream (e.g. ask for usage in streams); return true when changed. */
  prepareUpstream?(body: Record<string, unknown>, ctx: Ctx): boolean;
  usageFromBody(json: unknown): Usage | undefined;
  /** True when a whole answer says it was cut by its output cap (the stream counterpart is StreamScanner.incomplete). */
  incomplete?(json: unknown): boolean;
  /**
   * The parts of a whole JSON answer (an object) that usageFromBody and incomplete read, for a format whose answers
   * are mostly what they do not read (an embedding's numbers, an image's base64): the relay then parses only these
   * (json-pick.ts) instead of the whole, unless it rewrites the answer's model. A text answer is read as fast whole
   * (docs/performance.md): its format leaves it out.
   */
  answerParts?: JsonPick;
  scanStream(ctx: Ctx): StreamScanner;
  /**
   * A stream that is not SSE (one JSON array, relayed as it comes): what its text says, whole
   * (`complete`) or as far as it was relayed when the client left. Formats without such streams leave it out.
   */
  readWholeStream?(text: string, complete: boolean): { usage?: Usage; incomplete: boolean; failed: boolean };
  /** Write the client-facing model name into a response object or stream chunk. */
  setModel(json: Record<string, unknown>, model: string): void;
  keepalive: string | null;
  /** Upstream state kept on the account that created it (stored responses): requests naming it go to that account. */
  pins?: ResponsePins;
  modelList?(models: ModelListEntry[]): unknown;
  /** The vendor's own model list upstream, for groups whose models are globs (what the upstream lists, they match). */
  modelListUpstream?: ModelListUpstream;
  /** One model, for a model-detail route (GET .../models/{model}). */
  modelInfo?(model: ModelListEntry): unknown;
  /** The smallest request of this format (a one-token answer), sent through one account by the admin API's account test. */
  probe?: FormatProbe;
  /** The format's translation to and from the canonical model (docs/translation.md), when it has one. */
  codec?: Codec;
  /**
   * Which routes of this format its codec translates, by route path (the gateway's pattern, e.g.
   * `/v1/messages/count_tokens`): the operation, `retrieve` for reading a stored answer (which the bridge serves from
   * the conversations it keeps, Codec.state), or undefined for a route only a native upstream serves.
   */
  operation?(routePath: string): Operation | 'retrieve' | undefined;
  /** The error for a group whose platform does not serve this format (default: 400 naming the platform). */
  unsupported?(platform: string): GatewayError;
}

/** Where a format names upstream state that lives on one account (ids the gateway pins to the account that made them). */
export interface ResponsePins {
  /** Request body field that continues a stored object (e.g. previous_response_id). */
  requestField: string;
  /** Route path parameters naming a stored object; the first segment counts (`{id}`, or `*subpath` = "<id>/cancel"). */
  pathParams: string[];
  /** First segments of those parameters that name an operation (e.g. `compact`), not a stored object. */
  operations: string[];
  /** Field of a whole answer holding the new object's id. */
  bodyField: string;
  /** Where a stream's scanner keeps the streamed object's id: a context variable of the format's, and its field. */
  streamVar: { variable: ContextVar<object>; field: string };
}

export interface FormatProbe {
  /** Upstream path of the request (the model in it, where the format names the model in the path). */
  path(model: string): string;
  body(model: string): Record<string, unknown>;
  /** Headers the upstream requires besides its credential (e.g. an API version). */
  headers?: Record<string, string>;
}

export interface UpstreamAuthStyle { header: string; value(credential: string): string }

/** A credential as it is presented: a secret (a static key or an issued token), when it expires, how it is sent. */
export interface IssuedCredential {
  secret: string;
  /** Epoch ms after which the upstream refuses it (none: never). */
  expiresAt?: number;
  /** The auth style it is sent in (a key of Env.upstreamAuth), overriding the platform's: an OAuth token is a bearer. */
  style?: string;
  /** Further parts a signer needs (a signing secret, a session token), never sent as they are. */
  parts?: Record<string, string>;
  /** Fields the next obtain takes in place of the configured ones (a rotated refresh token). */
  carry?: Record<string, string>;
}

/** What a credential provider's fetch may use: node's fetch, the deadline, the platform's origin (a relative token URL). */
export interface CredentialIo { fetch: typeof fetch; signal: AbortSignal; baseUrl?: string; now: number }

/**
 * A way of obtaining a credential that expires (adapters/credentials/: an OAuth 2 grant, a signed
 * JWT, signing keys): its account fields (JSON Schema properties) and how a fresh one is had. A failure
 * throws an Error whose message names no secret.
 */
export interface CredentialProvider {
  name: string;
  description: string;
  schema: JSONSchema;
  obtain(options: Record<string, any>, io: CredentialIo): Promise<IssuedCredential>;
}

/** The per-process cache of provider credentials (core/credentials.ts). */
export interface CredentialCache {
  /** The account's credential: a cached one, or one obtained now (one fetch however many ask). Throws CredentialFailure. */
  get(group: string, account: AccountConfig, baseUrl?: string): Promise<IssuedCredential>;
  /** Forget the account's cached credential (the upstream refused it): the next get obtains a new one. */
  forget(group: string, account: AccountConfig): void;
}

/** A request as it leaves for the upstream: what a kind may rewrite and sign (a request signature covers all of it). */
export interface LeavingRequest {
  method: string;
  /** Path and query, on the platform's (or account's) base URL. */
  path: string;
  headers: IncomingHttpHeaders;
  body?: Buffer | { length: number; chunks(): AsyncIterable<Buffer> };
}

/** Where a kind's request goes: the format it is in, its path as that format's API names it, the upstream model. */
export interface KindTarget {
  format: string; path: string; model?: string; options: Record<string, any>;
  /** The JSON body asks for a stream (`stream: true`): kinds that stream at another path read it. */
  stream?: boolean;
}

/**
 * An answer in a kind's own framing or error shape made into its format's (a binary event framing into SSE frames, a
 * cloud's error body into the format's envelope): fed the upstream's bytes as they come, it gives the format's bytes.
 */
export interface AnswerDecoder {
  /** The content type of what it gives (e.g. text/event-stream). */
  contentType: string;
  push(chunk: Buffer): string;
  /** The upstream body ended: what is still owed. */
  end(): string;
}

/**
 * An upstream kind (platforms.*.kind): a cloud or server that speaks some formats at its own paths, with its own auth.
 * The core and the proxy know kinds only through this table entry.
 */
export interface UpstreamKind {
  name: string;
  description: string;
  /** The platform fields of this kind (JSON Schema of an object; each property is a platform field). */
  schema: JSONSchema;
  /** Formats it speaks natively, given its options (a platform's own `format` overrides). */
  formats(options: Record<string, any>): string[];
  /** Auth style of a static credential (a key of Env.upstreamAuth); default: the format's own. */
  auth?: string;
  /** The origin its platforms take when they name no base_url (a cloud's regional host). */
  baseUrl?(options: Record<string, any>): string | undefined;
  /** Problems of its options the schema cannot say (messages, each for the platform). */
  check?(options: Record<string, any>): string[];
  /** The upstream path (and query) of a request: the format's own path mapped onto the kind's. */
  path?(target: KindTarget): string;
  /** The format it speaks for this upstream model, where that depends on the model (one cloud serving several vendors' models). */
  formatFor?(model: string, options: Record<string, any>): string | undefined;
  /**
   * The JSON body as the kind's cloud takes it (e.g. no `model`, its own version field), before it is signed; the same
   * object: unchanged. `headers` are the leaving ones, which it may change too (a header the kind takes in the body).
   */
  body?(json: Record<string, any>, target: KindTarget, headers: IncomingHttpHeaders): Record<string, any>;
  /** A decoder of an answer in the kind's own framing or error shape (by its status and headers); undefined: relayed as it came. */
  decode?(answer: { status: number; headers: IncomingHttpHeaders }, target: KindTarget): AnswerDecoder | undefined;
  /** The last step before sending: sign or otherwise finish the request (a signature hashes the body, the URL and headers). */
  sign?(req: LeavingRequest, credential: IssuedCredential, target: KindTarget & { url: URL }): Promise<void> | void;
  /** Milliseconds until a 429's limit resets, from headers of the kind's own (e.g. x-ms-retry-after-ms). */
  resetMs?(headers: IncomingHttpHeaders): number | undefined;
  /** The path of its model list, where it has one (format name → path). */
  modelsPath?(options: Record<string, any>): string | undefined;
}
