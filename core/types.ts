// Shared types of the engine: config shapes, request context, stages, plugins and format adapters.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GatewayError } from './errors.ts';
import type { Usage } from './usage.ts';
import type { Admission, IssuedKey, Store } from './store/types.ts';

export type JSONSchema = Record<string, unknown>;

// ---- config (after interpolation and validation) ----

export interface ServerConfig { host: string; port: number; workers: number | 'auto'; body_limit: number }

export interface PlatformConfig {
  name: string;
  base_url?: string;
  auth?: string;
  formats?: string[];
  simulator?: boolean;
}

export interface AccountConfig {
  id: string;
  credential: string;
  enabled: boolean;
  priority: number;
  weight: number;
  concurrency: number;
  base_url?: string;
  models?: string[];
  model_map?: Record<string, string>;
}

export interface GroupConfig {
  name: string;
  platform: string;
  models: string[];
  model_map: Record<string, string>;
  rate_multiplier: number;
  dedicated: boolean;
  accounts: AccountConfig[];
}

/** A client key as auth sees it: from gateway.yaml, or issued at runtime (an IssuedKey, which adds its own bookkeeping). */
export type KeyConfig = Omit<IssuedKey, 'created_at' | 'name'>;

export interface StageRef { name: string; options: unknown; path: (string | number)[] }

export interface RouteConfig {
  method: string;
  path: string;
  format: string;
  stages: StageRef[];
  pool?: string;
  upstream_path?: string;
}

export interface GatewayConfig {
  file: string;
  server: ServerConfig;
  store: { redis: string; prefix: string; retention_days: number; records_per_key: number; records_total: number; timeout_ms: number };
  admin: { token: string };
  platforms: Record<string, PlatformConfig>;
  groups: Record<string, GroupConfig>;
  keys: KeyConfig[];
  pricing: Record<string, Record<string, number>>;
  routes: RouteConfig[];
}

// ---- request context ----

/** performance.now() marks: arrival, the (last) upstream attempt sent, first byte relayed, the upstream's answer complete, response end. */
export interface Timings { start: number; upstreamStart?: number; firstByte?: number; upstreamEnd?: number; end?: number }

export interface Ctx {
  id: string;
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
  stream: boolean;
  usage?: Usage;
  /** What a stream relayed of the answer's text, for billing a stream the client left before its final usage. */
  streamed?: StreamedText;
  /** What rate-limit reserved for this request; metering hands it back when it settles. */
  admission?: Admission;
  /**
   * Left by rate-limit when a later stage of the route sends admissions (Plugin.sendsAdmission): that stage calls it
   * just before its own first store call, so both travel in one round trip. It resolves once the request is admitted
   * (`admission` set) and rejects with the refusal.
   */
  sendAdmission?: () => Promise<void>;
  /** Set once the request's usage was settled in the store (so nothing settles twice). */
  settled?: boolean;
  /** The upstream attempts of a request that needed more than one or failed (account, HTTP status or 0, how it ended). */
  attempts?: Attempt[];
  /** How the exchange ended: completed, incomplete (cut by the output cap), failed, disconnected, missing-terminal, timeout, rejected. */
  outcome?: string;
  /** Scratch space for adapters between request preparation and response scanning. */
  flags: Record<string, unknown>;
  body(): Promise<Buffer>;
  json(): Promise<Record<string, unknown>>;
  /** Replace the parsed body (a stage changed it); the proxy then forwards the re-serialized JSON. */
  setJson(value: Record<string, unknown>): void;
  /** Replace the raw body bytes (a non-JSON body a stage rewrote, e.g. a multipart field). */
  setBody(bytes: Buffer): void;
  bodyChanged(): boolean;
}

export interface Attempt { account: string; status: number; reason: string }

export type Next = () => Promise<void>;
export type Stage = (ctx: Ctx, next: Next) => Promise<void>;

// ---- plugins ----

export interface Env {
  config: GatewayConfig;
  metrics: Registry;
  log: Logger;
  formats: Record<string, FormatAdapter>;
  upstreamAuth: Record<string, UpstreamAuthStyle>;
  keysBySha: Map<string, KeyConfig>;
  store: Store;
  adminSha?: string;
  /**
   * Called whenever an issued key changes (in any process sharing the store), while this config is the running one.
   * Stages listen here, not on `store.onKeysChanged`: a reload drops these listeners with the stages that added them.
   */
  onKeysChanged(listener: () => void): void;
}

export interface Plugin<O = any> {
  name: string;
  description: string;
  schema: JSONSchema;
  /** Sends ctx.sendAdmission with its own first store call, before any upstream call (see Ctx.sendAdmission). */
  sendsAdmission?: boolean;
  create(options: O, env: Env, place: StagePlace): Stage;
}

/** Where a stage sits in its route's chain. */
export interface StagePlace {
  /** A later stage sends the admission (Plugin.sendsAdmission), so rate-limit may leave it to that stage. */
  admissionSentLater: boolean;
}

// ---- format adapters (implemented in adapters/) ----

export interface SseFrame { event?: string; data: string; raw: string }

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

export interface FormatAdapter {
  name: string;
  /** Platforms that serve this format natively (simulator platforms serve every format). */
  platforms: string[];
  /** Default upstream auth style (a key of Env.upstreamAuth). */
  upstreamAuth: string;
  /** Where the model is named: a JSON body field, a path parameter, or read by the adapter (e.g. a multipart field). */
  model: { body: string } | { param: string } | { read(ctx: Ctx): Promise<string | undefined>; write?(ctx: Ctx, model: string): Promise<void> };
  /** Minimal shape a JSON request body must have; checked once, when the body is first parsed. */
  requestSchema?: JSONSchema;
  isStream(body: Record<string, unknown> | undefined, ctx: Ctx): boolean;
  /** Adjust the request body for upstream (e.g. ask for usage in streams); return true when changed. */
  prepareUpstream?(body: Record<string, unknown>, ctx: Ctx): boolean;
  usageFromBody(json: unknown): Usage | undefined;
  /** True when a whole answer says it was cut by its output cap (the stream counterpart is StreamScanner.incomplete). */
  incomplete?(json: unknown): boolean;
  scanStream(ctx: Ctx): StreamScanner;
  /** Write the client-facing model name into a response object or stream chunk. */
  setModel(json: Record<string, unknown>, model: string): void;
  errorBody(err: GatewayError, ctx: { id: string }): unknown;
  /** The format's own in-stream error event; flags carry what the scanner saw (ids, sequence numbers). */
  streamError(err: GatewayError, flags?: Record<string, unknown>): string;
  keepalive: string | null;
  /** Upstream state kept on the account that created it (stored responses): requests naming it go to that account. */
  pins?: ResponsePins;
  modelList?(models: ModelListEntry[]): unknown;
  /** One model, for a model-detail route (GET .../models/{model}). */
  modelInfo?(model: ModelListEntry): unknown;
  /** The error for a group whose platform does not serve this format (default: 400 naming the platform). */
  unsupported?(platform: string): GatewayError;
}

/** Where a format names upstream state that lives on one account (ids the gateway pins to the account that made them). */
export interface ResponsePins {
  /** Request body field that continues a stored object (e.g. previous_response_id). */
  requestField: string;
  /** Route path parameters naming a stored object; the first segment counts (`{id}`, or `*subpath` = "<id>/cancel"). */
  pathParams: string[];
  /** Field of a whole answer holding the new object's id. */
  bodyField: string;
  /** Where a stream's scanner keeps the streamed object's id: a ctx.flags entry and its field. */
  streamFlag: { flag: string; field: string };
}

export interface UpstreamAuthStyle { header: string; value(credential: string): string }
