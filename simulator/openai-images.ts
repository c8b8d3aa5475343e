// OpenAI Images upstream: generations (JSON) and edits (multipart or JSON), answering with a real 1×1 PNG (docs/wire-formats.md#images).
//
// Usage rule (gpt-image-* models only; dall-e answers carry none, as the real API):
//   text_tokens = countTokens(prompt); image_tokens = 65 per input image (edits only);
//   input_tokens = text_tokens + image_tokens; output_tokens = 272 × n; total_tokens = input_tokens + output_tokens.
import type { Route, SimContext } from './context.ts';
import { type ErrorSpec, sendError } from './errors.ts';
import { isObject } from './incoming.ts';
import { boundaryOf, parseMultipart } from './multipart.ts';
import { sendJson } from './respond.ts';
import { countTokens } from './tokens.ts';

// Fixed counts so tests can compute usage by hand: 272 is what a real low-quality square image costs.
export const OUTPUT_TOKENS_PER_IMAGE = 272;
export const INPUT_TOKENS_PER_IMAGE = 65;
// A valid 1×1 RGBA PNG: small enough to inline, real enough for clients that decode it.
export const TINY_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** The fields both endpoints share, as strings or numbers whichever way they arrived. */
type ImageRequest = Record<string, unknown>;

export const imagesRoutes: Route[] = [
  { method: 'POST', path: '/v1/images/generations', dialect: 'openai', auth: true, handler: generate },
  { method: 'POST', path: '/v1/images/edits', dialect: 'openai', auth: true, handler: edit },
];

function generate(ctx: SimContext): void {
  if (!ctx.jsonOk || !isObject(ctx.json)) return sendError(ctx.res, ctx.dialect, badRequest('The request body must be a JSON object.', null));
  answer(ctx, ctx.json, 0);
}

function edit(ctx: SimContext): void {
  const form = readEdit(ctx);
  if ('status' in form) return sendError(ctx.res, ctx.dialect, form);
  if (form.images === 0) return sendError(ctx.res, ctx.dialect, badRequest("Missing required parameter: 'image'.", 'image', 'missing_required_parameter'));
  answer(ctx, form.request, form.images);
}

/** The edit's fields and how many input images it carries, from multipart (image or image[]) or JSON (images[]). */
function readEdit(ctx: SimContext): { request: ImageRequest; images: number } | ErrorSpec {
  const boundary = boundaryOf(ctx.req.headers['content-type']);
  if (boundary === undefined) {
    if (!ctx.jsonOk || !isObject(ctx.json)) return badRequest('Expected multipart/form-data or a JSON object.', null);
    const images = Array.isArray(ctx.json.images) ? ctx.json.images.length : 0;
    return { request: ctx.json, images };
  }
  const parts = parseMultipart(ctx.raw, boundary);
  if (!parts) return badRequest('Could not parse the multipart/form-data body.', null);
  const request: ImageRequest = {};
  let images = 0;
  for (const part of parts) {
    if (part.name === 'image' || part.name === 'image[]') images++;
    else if (part.filename === undefined) request[part.name] = part.data.toString('utf8');
  }
  return { request, images };
}

function answer(ctx: SimContext, request: ImageRequest, inputImages: number): void {
  const { prompt } = request;
  if (typeof prompt !== 'string' || prompt === '') return sendError(ctx.res, ctx.dialect, badRequest("Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter'));
  // Form fields arrive as strings, so n is read as a number either way.
  const n = request.n === undefined ? 1 : Number(request.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) return sendError(ctx.res, ctx.dialect, badRequest("Invalid 'n': expected an integer from 1 to 10.", 'n', 'invalid_value'));
  const model = typeof request.model === 'string' && request.model !== '' ? request.model : 'dall-e-2';
  const created = Math.floor(Date.now() / 1000);
  if (!model.startsWith('gpt-image')) return sendJson(ctx, 200, { created, data: Array.from({ length: n }, () => dalleImage(model, prompt, request.response_format)) });
  const textTokens = countTokens(prompt);
  const imageTokens = INPUT_TOKENS_PER_IMAGE * inputImages;
  const outputTokens = OUTPUT_TOKENS_PER_IMAGE * n;
  sendJson(ctx, 200, {
    created,
    data: Array.from({ length: n }, () => ({ b64_json: TINY_PNG_BASE64 })),
    background: resolved(request.background, 'opaque'),
    output_format: resolved(request.output_format, 'png'),
    quality: resolved(request.quality, 'medium'),
    size: resolved(request.size, '1024x1024'),
    usage: {
      input_tokens: textTokens + imageTokens,
      output_tokens: outputTokens,
      total_tokens: textTokens + imageTokens + outputTokens,
      input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
      output_tokens_details: { image_tokens: outputTokens, text_tokens: 0 },
    },
  });
}

/** dall-e answers with a URL unless asked for base64; a data: URL keeps the simulator self-contained. */
function dalleImage(model: string, prompt: string, format: unknown): Record<string, string> {
  const image: Record<string, string> = format === 'b64_json' ? { b64_json: TINY_PNG_BASE64 } : { url: `data:image/png;base64,${TINY_PNG_BASE64}` };
  return model === 'dall-e-3' ? { ...image, revised_prompt: prompt } : image;
}

/** What the real API reports for a setting: the requested value, with `auto` (or nothing) resolved to its choice. */
function resolved(value: unknown, auto: string): string {
  return typeof value === 'string' && value !== '' && value !== 'auto' ? value : auto;
}

function badRequest(message: string, param: string | null, code: string | null = null): ErrorSpec {
  return { status: 400, message, param, code };
}
