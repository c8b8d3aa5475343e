// The HTTP server: health and metrics endpoints, route dispatch into pipelines, one error path, reload and drain.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from './node-http.ts';
import { createHash } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import { AuthThrottle } from './auth-throttle.ts';
import { clientAddresses } from './client-address.ts';
import { Credentials } from './credentials.ts';
import { ConfigError, loadConfig, logConfigNotes, type ConfigDeps } from './config.ts';
import { answerRaw, clientErrorHandler } from './client-errors.ts';
import { httpRefusal, targetPath } from './http-rules.ts';
import { clientRequestId, createCtx, newRequestId } from './context.ts';
import { createCors, type Cors } from './cors.ts';
import { drainable, Running, type Drain } from './drain.ts';
import { asGatewayError, coreErrors, GatewayError, sendError } from './errors.ts';
import { KeyChanges, type KeyListeners } from './key-changes.ts';
import { lingerOnClose } from './lingering-close.ts';
import { createLogger, infoLine } from './log.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { ModelNames } from './model-names.ts';
import { Notifier } from './notify/notifier.ts';
import { compose } from './pipeline.ts';
import { callerOf, requestRecord } from './request-log.ts';
import { RouteMiss, Router } from './router.ts';
import { createStore } from './store/index.ts';
import type { Store } from './store/types.ts';
import type { Ctx, Env, FormatAdapter, GatewayConfig, KeyConfig, PlatformConfig, RouteConfig } from './types.ts';
import { sendJson } from './reply.ts';
import { version } from './version.ts';

export interface GatewayOptions {
  configFile: string; host?: string; port?: number; env?: NodeJS.ProcessEnv; log?: Logger;
  /** Log the config's warnings at each load (default); a cluster's workers leave them to the primary, so each shows once. */
  configWarnings?: boolean;
}

/** An upstream the gateway runs itself, for a platform of `simulator: true`. */
export interface BuiltInUpstream { url: string; close(): Promise<void> }

/**
 * What the gateway is composed of (the composition root, app/registry.ts, hands them in): the stages and formats a
 * config may name, the upstream auth styles, and how a simulator platform's upstream starts.
 */
export interface Parts<S extends BuiltInUpstream = BuiltInUpstream> extends Omit<ConfigDeps, 'env'> {
  /** The built-in simulator for this platform (it plays the platform's kind). */
  startSimulator(platform: PlatformConfig): Promise<S>;
}

export interface Gateway<S extends BuiltInUpstream = BuiltInUpstream> {
  url: string;
  port: number;
  config(): GatewayConfig;
  /** Each simulator platform's built-in upstream (on a loopback port). */
  simulators: Record<string, S>;
  /** Re-read the config file; on any problem the running config stays and the problems are returned. */
  reload(): Promise<string[]>;
  close(): Promise<void>;
}

interface Compiled { route: RouteConfig; format: FormatAdapter; run: (ctx: Ctx) => Promise<void> }
interface Runtime { config: GatewayConfig; router: Router<Compiled>; env: Env; keys: KeyListeners; cors?: Cors }

/** How long requests in flight may take to finish after a SIGTERM before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;
/** How long requests cut short at a shutdown (their background work aborted) may take to settle before the store closes. */
const CUT_SETTLE_MS = 2_000;

export async function startGateway<S extends BuiltInUpstream>(opts: GatewayOptions, parts: Parts<S>): Promise<Gateway<S>> {
  const log = opts.log ?? createLogger();
  const metrics = createMetrics();
  const simulators: Record<string, S> = {};
  const running = new Running();
  const closing = new AbortController();
  /** What lives as long as the process, across reloads: the store, and what counts and sends through it. */
  let opened: { store: Store; keyChanges: KeyChanges; notifier: Notifier; throttles: Throttles; credentials: Credentials } | undefined;
  const load = async (): Promise<Runtime> => {
    const { config, warnings } = loadConfig(opts.configFile, { ...parts, env: opts.env ?? process.env });
    if (opts.configWarnings !== false) logConfigNotes(log, { config, warnings });
    for (const platform of Object.values(config.platforms)) {
      if (!platform.simulator) continue;
      simulators[platform.name] ??= await parts.startSimulator(platform);
      platform.base_url = simulators[platform.name].url;
    }
    // The store is opened once; a reload that changes store settings needs a restart (logged).
    if (!opened) {
      const s = config.store;
      const store = await createStore({
        redis: s.redis, path: s.path, prefix: s.prefix, retentionDays: s.retention_days, recordsPerKey: s.records_per_key,
        recordsTotal: s.records_total, timeoutMs: s.timeout_ms,
      }, log);
      const t = config.auth_throttle;
      opened = {
        store, keyChanges: new KeyChanges(store, log), notifier: new Notifier(config.notifications, store, log, metrics.registry),
        throttles: {
          keys: new AuthThrottle('key', t.keys, t.max_addresses, log, metrics.registry),
          admin: new AuthThrottle('admin', t.admin, t.max_addresses, log, metrics.registry),
        },
        credentials: new Credentials({ providers: parts.credentialSources ?? {}, log, registry: metrics.registry }),
      };
      metrics.watchStore(store);
    }
    else if (storeMoved(config, runtimeConfig)) log.warn('store settings changed: restart to apply');
    await refuseIssuedAdminToken(config, opened.store);
    // What outlives a runtime takes a reload's settings once that config is the one to run.
    opened.notifier.configure(config.notifications);
    const t = config.auth_throttle;
    opened.throttles.keys.configure(t.keys, t.max_addresses);
    opened.throttles.admin.configure(t.admin, t.max_addresses);
    return buildRuntime(config, parts, log, metrics, opened, closing.signal);
  };
  let runtimeConfig: GatewayConfig | undefined;
  /** Serve with this runtime from now on; only its stages hear issued-key changes (the old ones go with the old runtime). */
  const live = (rt: Runtime): Runtime => {
    runtimeConfig = rt.config;
    rt.keys.run();
    return rt;
  };
  let runtime: Runtime;
  try {
    runtime = live(await load());
  } catch (err) {
    opened?.notifier.close();
    await Promise.all([opened?.store.close(), ...Object.values(simulators).map((s) => s.close())]);
    throw err;
  }

  // Connection limits are read once, at start: a reload does not re-listen.
  const limits = runtime.config.server;
  const server = createServer({
    keepAliveTimeout: limits.keepalive_timeout_ms, headersTimeout: limits.headers_timeout_ms,
    requestTimeout: limits.request_timeout_ms,
    // How often Node looks for connections past those timeouts (its default, 30 s, let an idle one stay 50% longer).
    connectionsCheckingInterval: Math.min(1000, limits.headers_timeout_ms),
    // A request without Host is answered by handle(), in its route's format, not with Node's bare 400.
    requireHostHeader: false,
  }, serve);
  function serve(req: IncomingMessage, res: ServerResponse): void {
    if (drain.draining) res.setHeader('connection', 'close');
    handle(runtime, req, res, metrics, drain, running).catch((err) => {
      log.error({ err }, 'unhandled error in request handler');
      if (!res.headersSent) sendError(res, coreErrors.internal_error(), '-');
      else res.destroy();
    });
  }
  // Node would send 100 Continue at once (before a 401 or 413 is known) and answer any other expectation with a bare
  // 417: the gateway sends 100 Continue when it first reads the body (context.ts), and handle() answers the rest.
  server.on('checkContinue', serve).on('checkExpectation', serve);
  // Node closes a CONNECT's connection without a word: it gets an answer, in the format of the route it names.
  server.on('connect', (req: IncomingMessage, socket: Socket) => refuseConnect(runtime, req, socket));
  if (limits.max_connections > 0) server.maxConnections = limits.max_connections;
  server.on('clientError', clientErrorHandler((err, method, path) => renderMiss(runtime, err, method, path)));
  const drain = drainable(server);
  const host = opts.host ?? runtime.config.server.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? runtime.config.server.port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const port = bound.port;
  const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  // The address actually bound (a wildcard stays a wildcard, a port 0 becomes the one given), not a URL to call it on.
  const address = bound.family === 'IPv6' ? `[${bound.address}]:${port}` : `${bound.address}:${port}`;
  const admin = runtime.config.admin.token ? 'on' : 'off';
  log.info({ address, version, routes: runtime.config.routes.length, admin }, `gateway listening on ${address}, admin API ${admin}`);

  return {
    url, port, simulators,
    config: () => runtime.config,
    async reload() {
      try { runtime = live(await load()); log.info('configuration reloaded'); return []; } catch (err) {
        const problems = (err as { problems?: string[] }).problems ?? [(err as Error).message];
        log.error({ problems }, 'reload failed; keeping the running configuration');
        return problems;
      }
    },
    async close() {
      const until = performance.now() + DRAIN_TIMEOUT_MS;
      await drain.drain(DRAIN_TIMEOUT_MS);
      // Requests whose client left may still read their upstream for its usage: the rest of the drain's time, then they
      // are cut and settle what they saw, before the store closes.
      if (!await running.idle(until - performance.now())) {
        closing.abort();
        await running.idle(CUT_SETTLE_MS);
      }
      await Promise.all(Object.values(simulators).map((s) => s.close()));
      opened?.notifier.close();
      await opened?.store.close();
    },
  };
}

/**
 * gateway.yaml's keys are checked as it loads (config.ts); an issued key's secret as admin.token would make that key's
 * holder the operator too. A store that cannot answer (Redis down at start) does not stop the start.
 */
async function refuseIssuedAdminToken(config: GatewayConfig, store: Store): Promise<void> {
  if (!config.admin.token) return;
  const issued = await store.getKey(createHash('sha256').update(config.admin.token).digest('hex')).catch(() => undefined);
  if (issued) throw new ConfigError([`${basename(config.file)} admin.token: is the secret of issued key "${issued.id}": the admin token must be a secret of its own`]);
}

/** The store a reload names is another one (it is opened once, at start). */
const storeMoved = (next: GatewayConfig, running: GatewayConfig | undefined): boolean =>
  !!running && (next.store.redis !== running.store.redis || next.store.path !== running.store.path);

interface Throttles { keys: AuthThrottle; admin: AuthThrottle }

function buildRuntime(config: GatewayConfig, parts: Parts, log: Logger, metrics: Metrics, opened: { store: Store; keyChanges: KeyChanges; notifier: Notifier; throttles: Throttles; credentials: Credentials }, closing: AbortSignal): Runtime {
  const { plugins, formats, upstreamAuth } = parts;
  const { store, notifier, throttles, credentials } = opened;
  const keys = opened.keyChanges.listeners();
  const env: Env = {
    config, log, metrics: metrics.registry, formats, upstreamAuth, kinds: parts.kinds ?? {}, credentials, store, onKeysChanged: keys.add, closing, models: new ModelNames(config),
    notify: notifier, throttles, clientAddress: clientAddresses(config.server.trusted_proxies),
    keysBySha: new Map<string, KeyConfig>(config.keys.map((k) => [k.sha256, k])),
    adminSha: config.admin.token ? createHash('sha256').update(config.admin.token).digest('hex') : undefined,
  };
  const router = new Router<Compiled>();
  for (const route of config.routes) {
    const stages = route.stages.map((s, i) => plugins[s.name].create(s.options, env, {
      laterTakes: (name) => route.stages.slice(i + 1).some((later) => plugins[later.name].takes?.includes(name) === true),
    }));
    const rules = route.params && Object.fromEntries(Object.entries(route.params).map(([name, re]) => [name, new RegExp(`^(?:${re})$`)]));
    router.add(route.method, route.path, { route, format: formats[route.format], run: compose(stages) }, rules);
  }
  const cors = createCors(config.server.cors.origins, (method, path) => { try { router.match(method, path); return true; } catch { return false; } });
  return { config, router, env, keys, cors };
}

/** The same answer every time, made once. */
const HEALTHY = { status: 'ok', version };

const OPS: Record<string, (rt: Runtime, res: ServerResponse, metrics: Metrics, draining: boolean) => Promise<void> | void> = {
  '/healthz': (_rt, res) => sendJson(res, 200, HEALTHY),
  '/readyz': (_rt, res, _m, draining) => sendJson(res, draining ? 503 : 200, { status: draining ? 'draining' : 'ready' }),
  '/metrics': async (_rt, res, metrics) => {
    const body = await metrics.text().catch((err: Error) => err);
    if (body instanceof Error) res.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${body.message}\n`);
    else res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body);
  },
};

/** The format of the route a method and path name, or of the one they come nearest to. */
function formatNear(rt: Runtime, method: string | undefined, path: string | undefined): FormatAdapter | undefined {
  if (method === undefined || path === undefined) return undefined;
  try { return rt.router.match(method, path).route.format; } catch (miss) { return (miss as RouteMiss<Compiled>).near?.format; }
}

/**
 * The error body for a request no route could take (or that Node could not parse): in the format of the route it
 * names or comes nearest to, so each client reads its own error shape.
 */
function renderMiss(rt: Runtime, err: GatewayError, method: string | undefined, path: string | undefined): string {
  const format = formatNear(rt, method, path);
  const id = newRequestId();
  return JSON.stringify(format ? format.errorBody(err, { id }) : { error: { message: err.message, type: 'invalid_request_error', code: err.code, request_id: id } });
}

/** A CONNECT, answered and closed: the gateway is no proxy. */
function refuseConnect(rt: Runtime, req: IncomingMessage, socket: Socket): void {
  const path = targetPath(req.url ?? '');
  let err: GatewayError = coreErrors.connect_not_supported();
  // One that names a path gets what the router answers there: a route's 405 naming its methods (`allow`), or a 404.
  if (path !== undefined) try { rt.router.match('CONNECT', path); } catch (miss) { err = asGatewayError(miss); }
  answerRaw(socket, err, renderMiss(rt, err, 'CONNECT', path));
}

/** Declared body bytes an early answer still reads and discards, so that the connection can serve its next request. */
const DRAIN_LIMIT = 64 * 1024;

/**
 * A request answered before its body was read: a small body is drained (the connection stays reusable); a large one,
 * or one of unknown length, is not read at all: the answer closes the connection.
 */
function leaveBody(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete) return;
  if (Number(req.headers['content-length']) <= DRAIN_LIMIT) { req.resume(); return; }
  lingerOnClose(req.socket);
  if (!res.headersSent) res.setHeader('connection', 'close');
  else if (res.writableFinished) req.socket.destroySoon();
  else res.once('finish', () => req.socket.destroySoon());
}


async function handle(rt: Runtime, req: IncomingMessage, res: ServerResponse, metrics: Metrics, drain: Drain, running: Running): Promise<void> {
  const start = performance.now();
  const id = newRequestId();
  const clientId = clientRequestId(req);
  res.setHeader('x-request-id', id);
  if (clientId !== undefined) res.setHeader('x-client-request-id', clientId);
  const raw = req.url ?? '/';
  const method = req.method ?? 'GET';
  const refused = httpRefusal(req);
  if (refused) {
    // In the format of the route the request names, and the connection closed: what follows on it cannot be trusted.
    leaveBody(req, res);
    res.setHeader('connection', 'close');
    const format = formatNear(rt, method, targetPath(raw));
    if (format?.idHeader) res.setHeader(format.idHeader, id);
    return sendError(res, refused, id, format);
  }
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const search = q === -1 ? '' : raw.slice(q);
  if (rt.cors?.(req, res, path)) return; // a preflight, answered
  const ops = method === 'GET' ? OPS[path] : undefined;
  if (ops) return ops(rt, res, metrics, drain.draining);

  let compiled: Compiled;
  let params: Record<string, string>;
  try {
    ({ route: compiled, params } = rt.router.match(method, path));
  } catch (err) {
    leaveBody(req, res);
    const format = (err as RouteMiss<Compiled>).near?.format;
    if (format?.idHeader) res.setHeader(format.idHeader, id);
    return sendError(res, asGatewayError(err), id, format);
  }
  if (compiled.format.idHeader) res.setHeader(compiled.format.idHeader, id);
  const caller = callerOf(req, rt.env.clientAddress);
  const ctx = createCtx({
    id, clientRequestId: clientId, req, res, path, search, params, route: compiled.route, format: compiled.format,
    log: rt.env.log, bodyLimit: rt.config.server.body_limit, start,
  });
  metrics.inFlight.inc();
  running.enter();
  let thrown: GatewayError | undefined;
  try {
    try {
      await compiled.run(ctx);
      if (!res.headersSent) throw coreErrors.no_response();
    } catch (err) {
      if (!(err instanceof GatewayError)) ctx.log.error({ err, req_id: id }, 'stage failed');
      thrown = asGatewayError(err);
      ctx.end('rejected');
    }
    await ctx.ended(ctx, thrown);
    leaveBody(req, res);
    if (thrown) sendError(res, thrown, id, ctx.format, ctx);
  } finally {
    running.leave();
    metrics.inFlight.dec();
    ctx.timings.end = performance.now();
    metrics.observe(ctx, res.statusCode, rt.env.models);
    // Build the log line only when it is written (LOG_LEVEL above info skips it).
    if (ctx.log.isLevelEnabled('info')) infoLine(ctx.log, requestRecord(ctx, caller, res.statusCode, thrown, drain.cut), 'request');
  }
}
