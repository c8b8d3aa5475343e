// OpenAI embeddings upstream: POST /v1/embeddings, float or base64 vectors, usage of prompt tokens only.
//
// Token rule: prompt_tokens = Σ over the inputs of their tokens (tokens.ts; an input given as token ids counts its ids);
// total_tokens = prompt_tokens. Each vector is vectorOf(input text, dimensions) (vectors.ts).
import type { Route, SimContext } from './context.ts';
import { type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { sendJson } from './respond.ts';
import { countTokens } from './tokens.ts';
import { base64Of, DEFAULT_DIMENSIONS, MAX_DIMENSIONS, vectorOf } from './vectors.ts';

interface EmbeddingRequest { model: string; inputs: (string | number[])[]; base64: boolean; dimensions: number }

export const embeddingsRoutes: Route[] = [
  { method: 'POST', path: '/v1/embeddings', dialect: 'openai', auth: true, handler: embeddings },
];

function embeddings(ctx: SimContext): void {
  const request = validate(ctx.json, ctx.jsonOk);
  if ('status' in request) return sendError(ctx.res, ctx.dialect, request);
  const data = request.inputs.map((input, index) => {
    const vector = vectorOf(typeof input === 'string' ? input : input.join(' '), request.dimensions);
    return { object: 'embedding', index, embedding: request.base64 ? base64Of(vector) : vector };
  });
  const promptTokens = request.inputs.reduce((n, input) => n + (typeof input === 'string' ? countTokens(input) : input.length), 0);
  sendJson(ctx, 200, { object: 'list', data, model: request.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } });
}

const problem = (message: string, param: string): ErrorSpec => ({ status: 400, message, param, code: null });

const isTokens = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((n) => Number.isInteger(n));

function validate(body: unknown, jsonOk: boolean): EmbeddingRequest | ErrorSpec {
  if (!jsonOk || !isObject(body)) return problem('We could not parse the JSON body of your request.', 'body');
  if (typeof body.model !== 'string' || !body.model) return problem('you must provide a model parameter', 'model');
  const input = body.input;
  // A string, a list of strings, a list of token ids, or a list of such lists (wire shape of the API).
  const inputs = typeof input === 'string' ? [input]
    : isTokens(input) ? [input]
    : Array.isArray(input) && input.length > 0 && input.every((i) => (typeof i === 'string' && i !== '') || isTokens(i)) ? input as (string | number[])[]
    : undefined;
  if (!inputs || inputs.includes('')) return problem("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input');
  const dims = body.dimensions ?? DEFAULT_DIMENSIONS;
  if (!Number.isInteger(dims) || (dims as number) < 1 || (dims as number) > MAX_DIMENSIONS) return problem(`dimensions must be 1-${MAX_DIMENSIONS}`, 'dimensions');
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') return problem("encoding_format must be 'float' or 'base64'", 'encoding_format');
  return { model: body.model, inputs, base64: format === 'base64', dimensions: dims as number };
}
