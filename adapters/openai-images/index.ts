// OpenAI Images: the model from a JSON body (generations) or a multipart form field (edits), usage, error envelopes.
import { defineErrors } from '../../core/errors.ts';
import type { Ctx, FormatAdapter } from '../../core/types.ts';
import { openaiErrorBody, openaiErrorObject } from '../shared/openai-errors.ts';
import { openaiModel, openaiModelList, openaiModelListUpstream } from '../shared/openai-models.ts';
import { openaiTokenUsage } from '../shared/openai-usage.ts';
import { OPENAI_FAMILY } from '../shared/openai-family.ts';
import { contextVar } from '../../core/vars.ts';
import { formatFrame } from '../shared/sse.ts';
import { isMultipart, readFormFields, replaceFormField } from './multipart.ts';
import { scanImagesStream } from './stream.ts';

// isStream gets no body for a model read by the adapter, so reading the model also records the stream flag here.
/** The stream flag, read from a multipart form field or the JSON body where the model is read. */
const STREAM = contextVar<boolean>('openai-images:stream');
const NOT_SUPPORTED = 'IMAGES_NOT_SUPPORTED';
const errors = defineErrors('openai-images', {
  images_not_supported: { wire: NOT_SUPPORTED, status: 404, doc: 'An images request on a group whose platform has no images API (the established body: `not_found_error`).', message: 'Images API is not supported for this platform' },
});

async function readModel(ctx: Ctx): Promise<string | undefined> {
  const type = String(ctx.req.headers['content-type'] ?? '');
  if (isMultipart(type)) {
    // Every non-file value travels as a string form field (docs/wire-formats.md#images).
    const fields = readFormFields(await ctx.body(), type, ['model', 'stream']);
    ctx.set(STREAM, fields.stream?.trim() === 'true');
    return fields.model?.trim() || undefined;
  }
  const body = await ctx.json();
  ctx.set(STREAM, body.stream === true);
  return typeof body.model === 'string' ? body.model : undefined;
}

/** Send the aliased model upstream: splice the multipart field in place, or set the JSON field. */
async function writeModel(ctx: Ctx, model: string): Promise<void> {
  const type = String(ctx.req.headers['content-type'] ?? '');
  if (!isMultipart(type)) return ctx.setJson({ ...(await ctx.json()), model });
  const replaced = replaceFormField(await ctx.body(), type, 'model', model);
  if (replaced) ctx.setBody(replaced);
}

export const openaiImages: FormatAdapter = {
  name: 'openai-images',
  ...OPENAI_FAMILY,
  model: { read: readModel, write: writeModel },
  // JSON (generations) or multipart (edits): the model reader parses what it finds.
  jsonBody: false,
  forwardQuery: [],
  // Checked only for JSON bodies (multipart is never parsed as JSON).
  requestSchema: { type: 'object', properties: { stream: { type: 'boolean' } } },
  isStream: (body, ctx) => (body ? body.stream === true : ctx.get(STREAM) === true),
  usageFromBody: (json) => openaiTokenUsage((json as Record<string, unknown> | undefined)?.usage),
  answerParts: { usage: true },
  scanStream: scanImagesStream,
  // Image responses and events name no model, so there is nothing to rewrite.
  setModel() {},
  // The unsupported-platform refusal is the established body, byte for byte: OpenAI's envelope with no code and no param.
  errorBody: (err) => (err.code === NOT_SUPPORTED ? { error: { type: 'not_found_error', message: err.message } } : openaiErrorBody(err)),
  // openai-node throws on `event: error` and reads `data.error`.
  streamError: (err) => formatFrame(JSON.stringify({ type: 'error', error: openaiErrorObject(err) }), 'error'),
  keepalive: ': keepalive\n\n',
  modelList: openaiModelList,
  modelInfo: openaiModel,
  modelListUpstream: openaiModelListUpstream,
  unsupported: () => errors.images_not_supported(),
};
