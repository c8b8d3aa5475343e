// The HTTP server: health and metrics endpoints, route dispatch into pipelines, one error path, reload and drain.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { loadConfig, type ConfigDeps } from './config.ts';
import { createCtx, requestId } from './context.ts';
import { drainable } from './drain.ts';
import { asGatewayError, coreErrors, GatewayError, sendError } from './errors.ts';
import { KeyChanges, type KeyListeners } from './key-changes.ts';
import { createLogger } from './log.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { compose } from './pipeline.ts';
import { formats, plugins, startSimulator, upstreamAuth } from './registry.ts';
import { Router } from './router.ts';
import { createStore } from './store/index.ts';
import type { Store } from './store/types.ts';
import type { Ctx, Env, FormatAdapter, GatewayConfig, KeyConfig, RouteConfig } from './types.ts';

export interface GatewayOptions { configFile: string; host?: string; port?: number; env?: NodeJS.ProcessEnv; log?: Logger }

export interface Gateway {
  url: string;
  port: number;
  config(): GatewayConfig;
  /** Loopback URL of each simulator platform's built-in upstream. */
  simulators: Record<string, Awaited<ReturnType<typeof startSimulator>>>;
  /** Re-read the config file; on any problem the running config stays and the problems are returned. */
  reload(): Promise<string[]>;
  close(): Promise<void>;
}

interface Compiled { route: RouteConfig; format: FormatAdapter; run: (ctx: Ctx) => Promise<void> }
interface Runtime { config: GatewayConfig; router: Router<Compiled>; env: Env; keys: KeyListeners }

/** How long requests in flight may take to finish after a SIGTERM before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

const deps: ConfigDeps = { plugins, formats, upstreamAuth };

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const log = opts.log ?? createLogger();
  const metrics = createMetrics();
  const simulators: Gateway['simulators'] = {};
  let opened: { store: Store; keyChanges: KeyChanges } | undefined;
  const load = async (): Promise<Runtime> => {
    const { config, warnings } = loadConfig(opts.configFile, { ...deps, env: opts.env ?? process.env });
    for (const w of warnings) log.warn(w);
    for (const platform of Object.values(config.platforms)) {
      if (!platform.simulator) continue;
      // A built-in simulator runs as long as the gateway: it keeps only its latest requests (GET /_simulator/requests).
      simulators[platform.name] ??= await startSimulator({ host: '127.0.0.1', port: 0, maxRecorded: 1000 });
      platform.base_url = simulators[platform.name].url;
    }
    // The store is opened once; a reload that changes store settings needs a restart (logged).
    if (!opened) {
      const s = config.store;
      const store = createStore({
        redis: s.redis, prefix: s.prefix, retentionDays: s.retention_days, recordsPerKey: s.records_per_key,
        recordsTotal: s.records_total, timeoutMs: s.timeout_ms,
      }, log);
      opened = { store, keyChanges: new KeyChanges(store, log) };
    }
    else if (config.store.redis !== (runtimeConfig?.store.redis ?? config.store.redis)) log.warn('store settings changed: restart to apply');
    return buildRuntime(config, log, metrics, opened.store, opened.keyChanges);
  };
  let runtimeConfig: GatewayConfig | undefined;
  /** Serve with this runtime from now on; only its stages hear issued-key changes (the old ones go with the old runtime). */
  const live = (rt: Runtime): Runtime => {
    runtimeConfig = rt.config;
    rt.keys.run();
    return rt;
  };
  let runtime = live(await load());

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    if (drain.draining) res.setHeader('connection', 'close');
    handle(runtime, req, res, metrics, drain.draining).catch((err) => {
      log.error({ err }, 'unhandled error in request handler');
      if (!res.headersSent) sendError(res, coreErrors.internal(), '-');
      else res.destroy();
    });
  });
  server.headersTimeout = 60_000;
  const drain = drainable(server);
  const host = opts.host ?? runtime.config.server.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? runtime.config.server.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  log.info({ url, routes: runtime.config.routes.length }, 'gateway listening');

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
      await drain.drain(DRAIN_TIMEOUT_MS);
      await Promise.all(Object.values(simulators).map((s) => s.close()));
      await opened?.store.close();
    },
  };
}

function buildRuntime(config: GatewayConfig, log: Logger, metrics: Metrics, store: Store, keyChanges: KeyChanges): Runtime {
  const keys = keyChanges.listeners();
  const env: Env = {
    config, log, metrics: metrics.registry, formats, upstreamAuth, store, onKeysChanged: keys.add,
    keysBySha: new Map<string, KeyConfig>(config.keys.map((k) => [k.sha256, k])),
    adminSha: config.admin.token ? createHash('sha256').update(config.admin.token).digest('hex') : undefined,
  };
  const router = new Router<Compiled>();
  for (const route of config.routes) {
    const stages = route.stages.map((s, i) => plugins[s.name].create(s.options, env, {
      admissionSentLater: route.stages.slice(i + 1).some((later) => plugins[later.name].sendsAdmission === true),
    }));
    router.add(route.method, route.path, { route, format: formats[route.format], run: compose(stages) });
  }
  return { config, router, env, keys };
}

const OPS: Record<string, (rt: Runtime, res: ServerResponse, metrics: Metrics, draining: boolean) => Promise<void> | void> = {
  '/healthz': (_rt, res) => json(res, 200, { status: 'ok' }),
  '/readyz': (_rt, res, _m, draining) => json(res, draining ? 503 : 200, { status: draining ? 'draining' : 'ready' }),
  '/metrics': async (_rt, res, metrics) => {
    const body = await metrics.text().catch((err: Error) => err);
    if (body instanceof Error) res.writeHead(503, { 'content-type': 'text/plain' }).end(`metrics unavailable: ${body.message}\n`);
    else res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body);
  },
};

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function handle(rt: Runtime, req: IncomingMessage, res: ServerResponse, metrics: Metrics, draining: boolean): Promise<void> {
  const start = performance.now();
  const id = requestId(req);
  res.setHeader('x-request-id', id);
  const raw = req.url ?? '/';
  if (raw.charCodeAt(0) !== 47 /* / */) return sendError(res, new GatewayError(400, 'bad_url', 'Malformed request URL'), id);
  const q = raw.indexOf('?');
  const path = q === -1 ? raw : raw.slice(0, q);
  const search = q === -1 ? '' : raw.slice(q);
  const method = req.method ?? 'GET';
  const ops = method === 'GET' ? OPS[path] : undefined;
  if (ops) return ops(rt, res, metrics, draining);

  let compiled: Compiled;
  let params: Record<string, string>;
  try {
    ({ route: compiled, params } = rt.router.match(method, path));
  } catch (err) {
    req.resume();
    return sendError(res, asGatewayError(err), id);
  }
  const ctx = createCtx({
    id, req, res, path, search, params, route: compiled.route, format: compiled.format,
    log: rt.env.log, bodyLimit: rt.config.server.body_limit, start,
  });
  metrics.inFlight.inc();
  try {
    await compiled.run(ctx);
    if (!res.headersSent) throw new GatewayError(500, 'no_response', 'The route finished without answering');
  } catch (err) {
    if (!(err instanceof GatewayError)) ctx.log.error({ err, req_id: id }, 'stage failed');
    ctx.outcome ??= 'rejected';
    req.resume();
    sendError(res, asGatewayError(err), id, ctx.format, ctx.flags);
  } finally {
    metrics.inFlight.dec();
    ctx.timings.end = performance.now();
    metrics.observe(ctx, res.statusCode);
    // Build the log line only when it is written (LOG_LEVEL above info skips it).
    if (ctx.log.isLevelEnabled('info')) ctx.log.info({
      req_id: id, method, route: ctx.route.path, key_id: ctx.key?.id, group: ctx.group?.name, account: ctx.account?.id, attempts: ctx.attempts,
      model: ctx.model, upstream_model: ctx.upstreamModel, stream: ctx.stream, status: res.statusCode,
      outcome: ctx.outcome, usage: ctx.usage, duration_ms: Math.round(ctx.timings.end - start),
    }, 'request');
  }
}
