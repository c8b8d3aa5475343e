// Gemini embeddings upstream: :embedContent and :batchEmbedContents under /v1beta and /v1 (docs/wire-formats.md#gemini-endpoints).
//
// Only models named *embedding* embed; others answer 404 as Google does. Token rule: a content counts the tokens of its
// text parts (tokens.ts). Like the real API, models of the gemini-embedding-2 family report usageMetadata
// ({promptTokenCount, promptTokenDetails}: the tokens of every content embedded) and older ones report no usage.
// Each vector is vectorOf(the content's texts joined by a space, outputDimensionality) (vectors.ts).
import type { Route, SimContext } from './context.ts';
import { type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { decodeSegment } from './models.ts';
import { sendJson } from './respond.ts';
import { countTokens } from './tokens.ts';
import { DEFAULT_DIMENSIONS, MAX_DIMENSIONS, vectorOf } from './vectors.ts';

const methodPath = (method: string) => new RegExp(`^/v1(?:beta)?/models/([^/:]+):${method}$`);

export const geminiEmbeddingRoutes: Route[] = [
  { method: 'POST', path: methodPath('embedContent'), dialect: 'gemini', auth: true, handler: embedContent },
  { method: 'POST', path: methodPath('batchEmbedContents'), dialect: 'gemini', auth: true, handler: batchEmbedContents },
];

interface Embedded { values: number[]; tokens: number }

const reportsUsage = (model: string) => model.startsWith('gemini-embedding-2');

function embedContent(ctx: SimContext): void {
  const model = embeddingModel(ctx);
  if (typeof model !== 'string') return sendError(ctx.res, ctx.dialect, model);
  const one = embed(ctx.json, 'EmbedContentRequest');
  if ('status' in one) return sendError(ctx.res, ctx.dialect, one);
  sendJson(ctx, 200, { embedding: { values: one.values }, ...usage(model, [one]) });
}

function batchEmbedContents(ctx: SimContext): void {
  const model = embeddingModel(ctx);
  if (typeof model !== 'string') return sendError(ctx.res, ctx.dialect, model);
  const requests = isObject(ctx.json) ? ctx.json.requests : undefined;
  if (!Array.isArray(requests) || requests.length === 0) return sendError(ctx.res, ctx.dialect, { status: 400, message: '* BatchEmbedContentsRequest.requests: requests is not specified\n' });
  const embedded: Embedded[] = [];
  for (const [i, request] of requests.entries()) {
    // Every request of a batch names the model of the path.
    if (!isObject(request) || request.model !== `models/${model}`) {
      return sendError(ctx.res, ctx.dialect, { status: 400, message: `* BatchEmbedContentsRequest.requests[${i}].model: the model must be models/${model}, the model of the batch\n` });
    }
    const one = embed(request, `BatchEmbedContentsRequest.requests[${i}]`);
    if ('status' in one) return sendError(ctx.res, ctx.dialect, one);
    embedded.push(one);
  }
  sendJson(ctx, 200, { embeddings: embedded.map((e) => ({ values: e.values })), ...usage(model, embedded) });
}

function embeddingModel(ctx: SimContext): string | ErrorSpec {
  const model = decodeSegment(ctx.params[0]);
  if (model.includes('embedding')) return model;
  return { status: 404, message: `models/${model} is not found for API version v1beta, or is not supported for embedContent. Call ListModels to see the list of available models and their supported methods.` };
}

function embed(request: unknown, where: string): Embedded | ErrorSpec {
  const content = isObject(request) ? request.content : undefined;
  const parts = isObject(content) && Array.isArray(content.parts) ? content.parts.filter(isObject) : [];
  const texts = parts.map((p) => p.text).filter((text): text is string => typeof text === 'string');
  if (texts.length === 0) return { status: 400, message: `* ${where}.content: contains an empty part list or no text\n` };
  const dims = (request as Record<string, unknown>).outputDimensionality ?? (request as Record<string, unknown>).output_dimensionality ?? DEFAULT_DIMENSIONS;
  if (!Number.isInteger(dims) || (dims as number) < 1 || (dims as number) > MAX_DIMENSIONS) return { status: 400, message: `* ${where}.outputDimensionality: must be 1-${MAX_DIMENSIONS}\n` };
  const text = texts.join(' ');
  return { values: vectorOf(text, dims as number), tokens: texts.reduce((n, t) => n + countTokens(t), 0) };
}

function usage(model: string, embedded: Embedded[]): { usageMetadata?: object } {
  if (!reportsUsage(model)) return {};
  const tokens = embedded.reduce((n, e) => n + e.tokens, 0);
  return { usageMetadata: { promptTokenCount: tokens, promptTokenDetails: [{ modality: 'TEXT', tokenCount: tokens }] } };
}
