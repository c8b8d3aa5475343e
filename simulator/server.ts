// The simulator's http server: records each request, checks the credential, applies faults, then dispatches via the route table.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedRequest, Route, SimContext, SimulatorState } from './context.ts';
import { sendError } from './errors.ts';
import { applyFaultsBeforeHandler, CHUNK_DELAY_HEADER, FAULT_HEADER, parseChunkDelay, parseFault } from './faults.ts';
import { getModel, listModels } from './models.ts';
import { chatCompletions } from './openai-chat.ts';
import { sendJson } from './respond.ts';

export type { RecordedRequest } from './context.ts';

export interface Simulator {
  /** http://HOST:PORT, with a loopback host when listening on every interface. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  clear(): void;
  close(): Promise<void>;
}

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Default pause between stream chunks; the x-simulator-chunk-delay-ms header overrides it. */
  chunkDelayMs?: number;
  /** Keep at most this many recent requests (default: all). 0 records nothing, for benchmarks. */
  maxRecorded?: number;
}

/** Rejected like a missing key, so tests can exercise an upstream auth failure. */
export const BAD_CREDENTIAL = 'sim-bad-credential';
// Bodies past this are refused rather than buffered, so a runaway client cannot exhaust memory.
const BODY_LIMIT = 64 * 1024 * 1024;

const routes: Route[] = [
  { method: 'POST', path: '/v1/chat/completions', dialect: 'openai', auth: true, handler: chatCompletions },
  { method: 'GET', path: '/v1/models', dialect: 'openai', auth: true, handler: listModels },
  { method: 'GET', path: /^\/v1\/models\/([^/]+)$/, dialect: 'openai', auth: true, handler: getModel },
  { method: 'GET', path: '/_simulator/requests', dialect: 'openai', auth: false, internal: true, handler: (ctx) => sendJson(ctx, 200, ctx.state.requests) },
  { method: 'DELETE', path: '/_simulator/requests', dialect: 'openai', auth: false, internal: true, handler: (ctx) => { ctx.state.clear(); sendJson(ctx, 200, { cleared: true }); } },
];

function findRoute(method: string, path: string): { route: Route; params: string[] } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    if (typeof route.path === 'string') {
      if (route.path === path) return { route, params: [] };
      continue;
    }
    const match = route.path.exec(path);
    if (match) return { route, params: match.slice(1) };
  }
  return undefined;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const requests: RecordedRequest[] = [];
  const state: SimulatorState = { requests, clear: () => { requests.length = 0; } };
  const maxRecorded = opts.maxRecorded ?? Infinity;
  const chunkDelayMs = opts.chunkDelayMs ?? 0;
  let seq = 0;

  const record = (entry: RecordedRequest): void => {
    if (maxRecorded <= 0) return;
    requests.push(entry);
    if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A handler bug must cost one request, never the process.
      try {
        sendError(res, 'openai', { status: 500, message: `Simulator failure: ${err instanceof Error ? err.message : String(err)}` });
      } catch {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const n = ++seq;
    res.setHeader('x-request-id', `req_sim_${n}`);
    const controller = new AbortController();
    res.once('close', () => controller.abort());

    const rawPath = req.url ?? '/';
    const method = req.method ?? 'GET';
    const path = rawPath.split('?', 1)[0];
    const found = findRoute(method, path);
    const dialect = found?.route.dialect ?? 'openai';

    const body = await readBody(req);
    if (controller.signal.aborted) return;
    if (body === undefined) {
      sendError(res, dialect, { status: 413, message: `Request body exceeds ${BODY_LIMIT} bytes.` });
      return;
    }
    const parsed = parseJson(body);
    if (!found?.route.internal) {
      record({ method, path: rawPath, headers: { ...req.headers }, body, ...(parsed.ok ? { json: parsed.value } : {}), at: Date.now() });
    }
    if (!found) {
      sendError(res, dialect, { status: 404, message: `Invalid URL (${method} ${path})` });
      return;
    }
    const { route, params } = found;
    if (route.auth) {
      const problem = credentialProblem(req);
      if (problem) {
        sendError(res, dialect, { status: 401, message: problem, code: 'invalid_api_key' });
        return;
      }
    }
    const fault = route.internal ? parseFault(undefined) : parseFault(req.headers[FAULT_HEADER]);
    if (typeof fault === 'string') {
      sendError(res, dialect, { status: 400, message: `Bad ${FAULT_HEADER} header: ${fault}` });
      return;
    }
    const ctx: SimContext = {
      req, res, seq: n, path, params, body,
      json: parsed.ok ? parsed.value : undefined,
      jsonOk: parsed.ok,
      dialect, fault,
      chunkDelayMs: parseChunkDelay(req.headers[CHUNK_DELAY_HEADER], chunkDelayMs),
      signal: controller.signal,
      state,
    };
    if (await applyFaultsBeforeHandler(ctx)) return;
    await route.handler(ctx);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(address.address)}:${address.port}`,
    port: address.port,
    requests,
    clear: state.clear,
    close: () => new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      // Idle keep-alive sockets and hanging requests would otherwise hold close() open.
      server.closeAllConnections();
    }),
  };
}

/** Why the request's credential is refused, or undefined when it is acceptable. */
function credentialProblem(req: IncomingMessage): string | undefined {
  const bearer = /^Bearer\s+(.*)$/i.exec(String(req.headers.authorization ?? ''))?.[1]?.trim();
  const candidates = [bearer, req.headers['x-api-key'], req.headers['x-goog-api-key']]
    .map((value) => (Array.isArray(value) ? value[0] : value)?.trim())
    .filter((value): value is string => Boolean(value));
  if (candidates.length === 0) {
    return 'Missing credentials. Please pass an API key in the Authorization header (Bearer), x-api-key or x-goog-api-key.';
  }
  if (candidates.includes(BAD_CREDENTIAL)) return `Incorrect API key provided: ${BAD_CREDENTIAL}.`;
  return undefined;
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Keep draining past the limit so the 413 can still be read by the client.
      if (size <= BODY_LIMIT) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= BODY_LIMIT ? Buffer.concat(chunks).toString('utf8') : undefined));
    // An aborted upload also closes the response, and the caller checks for that.
    req.on('error', () => resolve(''));
  });
}

function parseJson(body: string): { ok: true; value: unknown } | { ok: false } {
  if (body === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}
