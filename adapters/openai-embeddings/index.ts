// OpenAI Embeddings (POST /v1/embeddings): model in the body, never streamed, usage of the prompt only, OpenAI error envelope.
import { defineErrors } from '../../core/errors.ts';

import type { FormatAdapter } from '../../core/types.ts';
import { num, type Usage } from '../../core/usage.ts';
import { noStream } from '../shared/no-stream.ts';
import { openaiErrorBody } from '../shared/openai-errors.ts';
import { openaiModel, openaiModelList, openaiModelListUpstream } from '../shared/openai-models.ts';
import { OPENAI_FAMILY } from '../shared/openai-family.ts';

const errors = defineErrors('openai-embeddings', {
  embeddings_not_supported: { wire: 'EMBEDDINGS_NOT_SUPPORTED', status: 404, doc: 'An OpenAI embeddings request on a group whose platform has no OpenAI embeddings.', message: (platform: string) => `Embeddings API is not supported for this platform (${platform})` },
});

/** usage: { prompt_tokens, total_tokens }: embeddings read input and write no tokens. */
function embeddingUsage(json: unknown): Usage | undefined {
  const usage = (json as { usage?: Record<string, unknown> } | undefined)?.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  return { input: num(usage.prompt_tokens), cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
}

export const openaiEmbeddings: FormatAdapter = {
  name: 'openai-embeddings',
  ...OPENAI_FAMILY,
  model: { body: 'model' },
  jsonBody: true,
  forwardQuery: [],
  // input: a string, strings, token ids or lists of token ids; the upstream checks the details.
  requestSchema: { type: 'object', required: ['input'], properties: { input: { type: ['string', 'array'] } } },
  isStream: () => false,
  usageFromBody: embeddingUsage,
  answerParts: { usage: true },
  scanStream: () => noStream,
  setModel(json, model) { if (typeof json.model === 'string') json.model = model; },
  errorBody: (err) => openaiErrorBody(err),
  // Never streamed; should an answer fail after it began, its body ends with the same JSON error.
  streamError: (err) => JSON.stringify(openaiErrorBody(err)),
  keepalive: null,
  modelList: openaiModelList,
  modelInfo: openaiModel,
  modelListUpstream: openaiModelListUpstream,
  unsupported: (platform) => errors.embeddings_not_supported(platform),
};
