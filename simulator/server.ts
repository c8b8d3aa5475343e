// The simulator's http server: records each request, checks the credential, applies faults, then dispatches via the route table.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from '../core/node-http.ts';
import type { AddressInfo } from 'node:net';
import { anthropicMessagesRoutes } from './anthropic-messages.ts';
import { anthropicModelRoutes } from './anthropic-models.ts';
import type { RecordedRequest, Route, SimContext, SimulatorState } from './context.ts';
import { type Dialect, sendError } from './errors.ts';
import { activeFault, applyFaultsBeforeHandler, CHUNK_DELAY_HEADER, FAULT_HEADER, noFault, parseChunkDelay } from './faults.ts';
import { geminiRoutes } from './gemini.ts';
import { geminiModelRoutes } from './gemini-models.ts';
import { geminiEmbeddingRoutes } from './gemini-embeddings.ts';
import { BODY_LIMIT, parseJson, readBody, readCredential } from './incoming.ts';
import { getModel, listModels } from './models.ts';
import { chatCompletions } from './openai-chat.ts';
import { embeddingsRoutes } from './openai-embeddings.ts';
import { imagesRoutes } from './openai-images.ts';
import { responsesRoutes } from './openai-responses.ts';
import { sendJson } from './respond.ts';
import { AzureSimulator } from './azure.ts';
import { VertexSimulator, vertexRoute } from './vertex.ts';
import { BedrockSimulator, frameAsBedrock } from './bedrock.ts';
import { DEFAULT_MAX_STORED_RESPONSES, ResponseStore } from './response-store.ts';

export type { RecordedRequest } from './context.ts';
export { BAD_CREDENTIAL } from './incoming.ts';

export interface Simulator {
  /** http://HOST:PORT, with a loopback host when listening on every interface. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Playing azure-openai: its token endpoint and content filter. */
  azure?: AzureSimulator;
  /** Playing vertex: its token endpoint (trust a service account's key here) and its publisher paths. */
  vertex?: VertexSimulator;
  /** Playing bedrock: its SigV4 verification. */
  bedrock?: BedrockSimulator;
  clear(): void;
  close(): Promise<void>;
}

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default pause between stream chunks; the x-simulator-chunk-delay-ms header overrides it. */
  chunkDelayMs?: number;
  /** Keep at most this many recent requests (default: all). 0 records nothing, for benchmarks. */
  maxRecorded?: number;
  /** Keep at most this many Responses API objects for GET and previous_response_id (default 10 000). */
  maxStoredResponses?: number;
  /** The upstream kind it plays (azure-openai, vertex: their paths and credentials); none: the first-party APIs. */
  kind?: string;
  /** Lifetime of the tokens its token endpoint issues (azure-openai, vertex). */
  tokenTtlMs?: number;
  /** The AWS access keys it accepts, id → secret (bedrock: SigV4 signatures are verified with them). */
  awsKeys?: Record<string, string>;
}

// First match wins: Anthropic's models routes precede OpenAI's, claiming GET /v1/models when anthropic-version is sent.
const routes: Route[] = [
  ...anthropicMessagesRoutes,
  ...anthropicModelRoutes,
  ...responsesRoutes,
  ...imagesRoutes,
  ...geminiRoutes,
  ...geminiModelRoutes,
  ...geminiEmbeddingRoutes,
  ...embeddingsRoutes,
  { method: 'POST', path: '/v1/chat/completions', dialect: 'openai', auth: true, handler: chatCompletions },
  { method: 'GET', path: '/v1/models', dialect: 'openai', auth: true, handler: listModels },
  { method: 'GET', path: /^\/v1\/models\/([^/]+)$/, dialect: 'openai', auth: true, handler: getModel },
  { method: 'GET', path: '/_simulator/requests', dialect: 'openai', auth: false, internal: true, handler: (ctx) => sendJson(ctx, 200, ctx.state.requests) },
  { method: 'DELETE', path: '/_simulator/requests', dialect: 'openai', auth: false, internal: true, handler: (ctx) => { ctx.state.clear(); sendJson(ctx, 200, { cleared: true }); } },
];

function findRoute(req: IncomingMessage, method: string, path: string): { route: Route; params: string[] } | undefined {
  for (const route of routes) {
    if (route.method !== method || (route.when && !route.when(req))) continue;
    if (typeof route.path === 'string') {
      if (route.path === path) return { route, params: [] };
      continue;
    }
    const match = route.path.exec(path);
    if (match) return { route, params: match.slice(1) };
  }
  return undefined;
}

/** The dialect an unmatched request's caller speaks, so its SDK still reads the 404 properly. */
function dialectOfUnknown(req: IncomingMessage, path: string): Dialect {
  if (path.startsWith('/v1beta/') || /^\/v1\/models\/[^/]*:/.test(path)) return 'gemini';
  return req.headers['anthropic-version'] === undefined ? 'openai' : 'anthropic';
}

/** What one running simulator shares across its requests. */
interface Instance {
  state: SimulatorState;
  record(entry: RecordedRequest): void;
  nextSeq(): number;
  chunkDelayMs: number;
  azure?: AzureSimulator;
  vertex?: VertexSimulator;
  bedrock?: BedrockSimulator;
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const requests: RecordedRequest[] = [];
  const maxRecorded = opts.maxRecorded ?? Infinity;
  let seq = 0;
  const instance: Instance = {
    state: {
      requests,
      clear: () => { requests.length = 0; },
      responses: new ResponseStore(opts.maxStoredResponses ?? DEFAULT_MAX_STORED_RESPONSES),
      faultUses: new Map(),
    },
    record: (entry) => {
      if (maxRecorded <= 0) return;
      requests.push(entry);
      if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
    },
    nextSeq: () => ++seq,
    chunkDelayMs: opts.chunkDelayMs ?? 0,
    ...(opts.kind === 'azure-openai' ? { azure: new AzureSimulator(opts.tokenTtlMs) } : {}),
    ...(opts.kind === 'vertex' ? { vertex: new VertexSimulator(opts.tokenTtlMs) } : {}),
    ...(opts.kind === 'bedrock' ? { bedrock: new BedrockSimulator(opts.awsKeys) } : {}),
  };

  const server = createServer((req, res) => {
    handle(instance, req, res).catch((err: unknown) => {
      // A handler bug must cost one request, never the process.
      try {
        sendError(res, 'openai', { status: 500, message: `Simulator failure: ${err instanceof Error ? err.message : String(err)}` });
      } catch {
        res.destroy();
      }
    });
  });
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
    azure: instance.azure,
    vertex: instance.vertex,
    bedrock: instance.bedrock,
    clear: instance.state.clear,
    close: () => new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      // Idle keep-alive sockets and hanging requests would otherwise hold close() open.
      server.closeAllConnections();
    }),
  };
}

async function handle(instance: Instance, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const seq = instance.nextSeq();
  res.setHeader('x-request-id', `req_sim_${seq}`);
  const controller = new AbortController();
  res.once('close', () => controller.abort());

  const method = req.method ?? 'GET';
  const rawPath = req.url ?? '/';
  const [given, search = ''] = splitOnce(rawPath, '?');
  const query = new URLSearchParams(search);
  // Playing Azure: its paths only, mapped onto the OpenAI routes once its credential is checked (below).
  const azure = instance.azure && !given.startsWith('/_simulator/') ? instance.azure : undefined;
  let path = azure ? given.replace(/^\/openai\/(v1|deployments\/[^/]+)(?=\/)/, '/v1').replace(/^\/openai(?=\/(models|responses)(\/|$))/, '/v1') : given;
  // Playing Vertex: its publisher paths only, mapped onto the Gemini and Messages routes once checked (below).
  const vertex = instance.vertex && !given.startsWith('/_simulator/') ? instance.vertex : undefined;
  const vertexTo = vertex ? vertexRoute(given) : undefined;
  if (vertexTo) path = vertexTo.path;
  // Playing Bedrock: its paths only, mapped onto the Anthropic routes once its signature is checked (below).
  const bedrock = instance.bedrock && !given.startsWith('/_simulator/') ? instance.bedrock : undefined;
  if (bedrock) path = '/v1/messages';
  let found = vertex && !vertexTo ? undefined : findRoute(req, bedrock ? 'POST' : method, path);
  const dialect = azure ? 'openai' : vertex ? vertexTo?.dialect ?? 'gemini' : found?.route.dialect ?? dialectOfUnknown(req, path);
  // Anthropic's SDK reports this header as the request id.
  if (dialect === 'anthropic') res.setHeader('request-id', `req_sim_${seq}`);

  const raw = await readBody(req);
  if (controller.signal.aborted) return;
  if (raw === undefined) {
    sendError(res, dialect, { status: 413, message: `Request body exceeds ${BODY_LIMIT} bytes.` });
    return;
  }
  let body = raw.toString('utf8');
  let parsed = parseJson(body);
  if (!found?.route.internal) {
    instance.record({ method, path: rawPath, headers: { ...req.headers }, body, ...(parsed.ok ? { json: parsed.value } : {}), at: Date.now() });
  }
  let kindCredential: string | undefined;
  if (azure) {
    const accepted = azure.accept(req, res, method, given, query, body);
    if (!accepted) return;
    path = accepted.path;
    kindCredential = accepted.credential;
    // The deployments API names the model in its path; the body's model is not needed.
    if (accepted.deployment && parsed.ok && parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value)) {
      (parsed.value as Record<string, unknown>).model = accepted.deployment;
      body = JSON.stringify(parsed.value);
      parsed = parseJson(body);
    }
    if (azure.filter(res, path, body, parsed.ok ? parsed.value : undefined)) return;
  }
  if (vertex) {
    const accepted = vertex.accept(req, res, method, given, body, parsed.ok ? parsed.value : undefined);
    if (!accepted) return;
    path = accepted.path;
    kindCredential = accepted.credential;
    if (accepted.body !== undefined) {
      body = accepted.body;
      parsed = parseJson(body);
    }
  }
  if (bedrock) {
    const accepted = await bedrock.accept(req, res, method, given, query, raw);
    if (!accepted) return;
    path = accepted.path;
    found = findRoute(req, 'POST', path);
    kindCredential = accepted.credential;
    body = accepted.body;
    parsed = parseJson(body);
    frameAsBedrock(res, accepted);
  }
  if (!found) {
    sendError(res, dialect, { status: 404, message: `Invalid URL (${method} ${path})` });
    return;
  }

  const { route, params } = found;
  const credential = kindCredential !== undefined ? { credential: kindCredential } : route.auth ? readCredential(req, query, dialect) : { credential: '' };
  if ('refusal' in credential) {
    sendError(res, dialect, credential.refusal);
    return;
  }
  const unmet = route.requires?.(req);
  if (unmet) {
    sendError(res, dialect, unmet);
    return;
  }
  const fault = route.internal ? noFault : activeFault(req.headers[FAULT_HEADER], credential.credential, instance.state.faultUses);
  if (typeof fault === 'string') {
    sendError(res, dialect, { status: 400, message: `Bad ${FAULT_HEADER} header: ${fault}` });
    return;
  }
  const ctx: SimContext = {
    req, res, seq, path, query, params, body, raw,
    credential: credential.credential,
    json: parsed.ok ? parsed.value : undefined,
    jsonOk: parsed.ok,
    dialect,
    fault,
    chunkDelayMs: parseChunkDelay(req.headers[CHUNK_DELAY_HEADER], instance.chunkDelayMs),
    signal: controller.signal,
    state: instance.state,
  };
  if (await applyFaultsBeforeHandler(ctx)) return;
  await route.handler(ctx);
}

function splitOnce(text: string, separator: string): [string, string?] {
  const at = text.indexOf(separator);
  return at === -1 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}

function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}
