// Gemini (generativelanguage v1beta/v1): model in the path, stream by method name, usageMetadata, Google error envelope, model list shape.
import type { GatewayError } from '../../core/errors.ts';
import type { FormatAdapter } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { geminiModel, geminiModelList, geminiModelListUpstream } from './models.ts';
import { cutByCap, geminiFrame, scanGeminiStream } from './stream.ts';
import { usageOfBody } from './usage.ts';
import { REQUEST_HEADERS, RESPONSE_HEADERS } from '../shared/headers.ts';
import { codec } from './codec/index.ts';

// google.rpc.Code names by HTTP status, as Google's own front end maps them (docs/wire-formats.md#gemini-errors; docs/translation.md, Errors).
const STATUS_BY_HTTP: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED', 413: 'INVALID_ARGUMENT', 429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL',
  501: 'UNIMPLEMENTED', 502: 'UNAVAILABLE', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

// The gateway's own code travels as an ErrorInfo reason, where Google puts machine-readable causes (e.g. API_KEY_INVALID).
const errorObject = (err: GatewayError, requestId?: string) => ({
  code: err.status,
  message: err.message,
  status: STATUS_BY_HTTP[err.status] ?? (err.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'),
  details: [{
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: err.code, domain: 'gateway',
    ...(requestId === undefined ? {} : { metadata: { request_id: requestId } }),
  }],
});

/**
 * A batch (batchEmbedContents) also names the model in each of its requests, and a request may carry one too: each is
 * sent for the model of the path, the one the gateway checked and bills (and an alias becomes the upstream model).
 */
function sameModelInBody(body: Record<string, unknown>, ctx: { upstreamModel?: string }): boolean {
  if (!ctx.upstreamModel) return false;
  const name = `models/${ctx.upstreamModel}`;
  const holders = [body, ...(Array.isArray(body.requests) ? body.requests : [])];
  let changed = false;
  for (const holder of holders) {
    if (!holder || typeof holder !== 'object' || Array.isArray(holder)) continue;
    const named = (holder as Record<string, unknown>).model;
    // A request of a batch always names it (the upstream requires it); the body itself only when it already does.
    if (named === name || (holder === body && named === undefined)) continue;
    (holder as Record<string, unknown>).model = name;
    changed = true;
  }
  return changed;
}

const setModelVersion = (json: unknown, model: string): void => {
  for (const chunk of Array.isArray(json) ? json : [json]) {
    if (chunk && typeof chunk === 'object' && typeof chunk.modelVersion === 'string') chunk.modelVersion = model;
  }
};

/**
 * A stream without alt=sse is one JSON array of GenerateContentResponse chunks. Cut short, the array so far, closed after
 * its last whole element, still names the prompt usage (a cut inside an element names none); an element carrying an
 * error object is how such a stream reports a failure after it began.
 */
function readJsonArrayStream(text: string, complete: boolean): { usage?: Usage; incomplete: boolean; failed: boolean } {
  try {
    const json = JSON.parse(complete ? text : `${text}]`) as unknown;
    const failed = Array.isArray(json) && json.some((e) => e !== null && typeof e === 'object' && 'error' in e);
    return { usage: usageOfBody(json), incomplete: cutByCap(json), failed };
  } catch {
    return { incomplete: false, failed: false };
  }
}

export const gemini: FormatAdapter = {
  name: 'gemini',
  codec,
  // Embedding routes share the format but not the codec: they stay native.
  operation: (path) => (/:(generateContent|streamGenerateContent)$/.test(path) ? 'generate' : /:countTokens$/.test(path) ? 'count_tokens' : undefined),
  platforms: ['gemini'],
  upstreamAuth: 'x-goog-api-key',
  model: { param: 'model' },
  jsonBody: true,
  // Never x-goog-user-project (it names the project that pays) nor other x-goog-* routing headers.
  forwardHeaders: [...REQUEST_HEADERS, 'x-goog-api-client'],
  returnHeaders: RESPONSE_HEADERS,
  // ?alt=sse picks the stream framing; ?key= is the client's credential and never forwarded.
  forwardQuery: ['alt'],
  credentialCheck: { path: '/v1beta/models' },
  requestSchema: { type: 'object', properties: { contents: { type: 'array' } } },
  // The method in the path decides, not the body; a client may percent-encode the colon.
  isStream: (_body, ctx) => /(?::|%3A)streamGenerateContent$/i.test(ctx.path),
  prepareUpstream: sameModelInBody,
  usageFromBody: usageOfBody,
  incomplete: cutByCap,
  scanStream: scanGeminiStream,
  readWholeStream: readJsonArrayStream,
  setModel: setModelVersion,
  errorBody: (err, ctx) => ({ error: errorObject(err, ctx.id) }),
  // @google/genai throws ApiError for a data frame whose JSON has an `error` object with a numeric 4xx/5xx code.
  streamError: (err) => geminiFrame(JSON.stringify({ error: errorObject(err) })),
  // No keepalive: the legacy Gemini SDK stalls on SSE comments and neither SDK knows a ping event.
  keepalive: null,
  probe: {
    path: (model) => `/v1beta/models/${encodeURIComponent(model)}:generateContent`,
    body: () => ({ contents: [{ role: 'user', parts: [{ text: 'ping' }] }], generationConfig: { maxOutputTokens: 1 } }),
  },
  modelList: geminiModelList,
  modelInfo: geminiModel,
  modelListUpstream: geminiModelListUpstream,
};
