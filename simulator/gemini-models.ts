// Gemini models list and lookup (docs/wire-formats.md#gemini-models): GET /v1beta/models and /v1beta/models/{model}.
import type { Route, SimContext } from './context.ts';
import { sendError } from './errors.ts';
import { decodeSegment } from './models.ts';
import { sendJson } from './respond.ts';

const methods = ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'];
const embeddingMethods = ['embedContent', 'countTextTokens', 'countTokens', 'asyncBatchEmbedContent'];

export const geminiModels = [
  {
    name: 'models/gemini-2.5-flash', version: '001', displayName: 'Gemini 2.5 Flash',
    description: 'Stable version of Gemini 2.5 Flash, a mid-size multimodal model that supports up to 1 million tokens.',
    inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedGenerationMethods: methods,
    temperature: 1, topP: 0.95, topK: 64, maxTemperature: 2, thinking: true,
  },
  {
    name: 'models/gemini-2.5-pro', version: '2.5', displayName: 'Gemini 2.5 Pro',
    description: 'Stable release of Gemini 2.5 Pro.',
    inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedGenerationMethods: methods,
    temperature: 1, topP: 0.95, topK: 64, maxTemperature: 2, thinking: true,
  },
  {
    name: 'models/gemini-2.0-flash', version: '2.0', displayName: 'Gemini 2.0 Flash',
    description: 'Gemini 2.0 Flash',
    inputTokenLimit: 1048576, outputTokenLimit: 8192, supportedGenerationMethods: methods,
    temperature: 1, topP: 0.95, topK: 40, maxTemperature: 2,
  },
  {
    name: 'models/gemini-embedding-001', version: '001', displayName: 'Gemini Embedding 001',
    description: 'Obtain a distributed representation of a text.',
    inputTokenLimit: 2048, outputTokenLimit: 1, supportedGenerationMethods: embeddingMethods,
  },
  {
    name: 'models/gemini-embedding-2', version: '2', displayName: 'Gemini Embedding 2',
    description: 'Multimodal embeddings; reports usageMetadata.',
    inputTokenLimit: 8192, outputTokenLimit: 1, supportedGenerationMethods: embeddingMethods,
  },
];

// Google's default page size.
const DEFAULT_PAGE_SIZE = 50;

export const geminiModelRoutes: Route[] = [
  { method: 'GET', path: '/v1beta/models', dialect: 'gemini', auth: true, handler: listModels },
  { method: 'GET', path: /^\/v1beta\/models\/([^/:]+)$/, dialect: 'gemini', auth: true, handler: getModel },
];

/** Pages by pageSize; the opaque pageToken is the offset, and nextPageToken is left out on the last page. */
function listModels(ctx: SimContext): void {
  const size = Math.min(Math.max(Number(ctx.query.get('pageSize')) || DEFAULT_PAGE_SIZE, 1), 1000);
  const start = Number(Buffer.from(ctx.query.get('pageToken') ?? '', 'base64url').toString()) || 0;
  const end = start + size;
  const next = end < geminiModels.length ? { nextPageToken: Buffer.from(String(end)).toString('base64url') } : {};
  sendJson(ctx, 200, { models: geminiModels.slice(start, end), ...next });
}

function getModel(ctx: SimContext): void {
  const name = `models/${decodeSegment(ctx.params[0])}`;
  const model = geminiModels.find((m) => m.name === name);
  if (model) return sendJson(ctx, 200, model);
  sendError(ctx.res, ctx.dialect, { status: 404, message: `Model is not found: ${name} for api version v1beta` });
}
