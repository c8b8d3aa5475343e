// OpenAI Responses: where the model and stream flag are, usage (body and terminal event), error envelopes, keepalive.
import type { FormatAdapter } from '../../core/types.ts';
import { openaiErrorBody } from '../shared/openai-errors.ts';
import { openaiModel, openaiModelList, openaiModelListUpstream } from '../shared/openai-models.ts';
import { openaiTokenUsage } from '../shared/openai-usage.ts';
import { OPENAI_FAMILY } from '../shared/openai-family.ts';
import { POSITION, responsesStreamError, scanResponsesStream } from './stream.ts';
import { codec } from './codec/index.ts';

export const openaiResponses: FormatAdapter = {
  name: 'openai-responses',
  ...OPENAI_FAMILY,
  codec,
  // Creating a response, counting its input, reading a stored one; cancel and compact are native only.
  operation: (path) => (/\/responses$/.test(path) ? 'generate' : /\/responses\/input_tokens$/.test(path) ? 'count_tokens'
    : /\/responses\/\{id\}$/.test(path) ? 'retrieve' : undefined),
  model: { body: 'model' },
  jsonBody: true,
  // Reading a stored response (include[], a replayed stream) and listing its input items (cursor paging).
  forwardQuery: ['include[]', 'include', 'stream', 'starting_after', 'include_obfuscation', 'after', 'before', 'limit', 'order'],
  requestSchema: {
    type: 'object',
    properties: {
      input: { type: ['string', 'array'] },
      stream: { type: 'boolean' },
    },
  },
  isStream: (body) => body?.stream === true,
  // Responses has no include_usage: usage always arrives in the terminal event, so nothing to prepare.
  usageFromBody: (json) => openaiTokenUsage((json as Record<string, unknown> | undefined)?.usage),
  incomplete: (json) => (json as Record<string, unknown> | undefined)?.status === 'incomplete',
  scanStream: scanResponsesStream,
  setModel(json, model) { if (typeof json.model === 'string') json.model = model; },
  errorBody: (err) => openaiErrorBody(err),
  streamError: responsesStreamError,
  keepalive: ': keepalive\n\n',
  // 16 is the smallest max_output_tokens the API accepts; store: false leaves nothing behind upstream.
  probe: { path: () => '/v1/responses', body: (model) => ({ model, input: 'ping', max_output_tokens: 16, store: false }) },
  // Stored responses live on the upstream account that created them.
  pins: { requestField: 'previous_response_id', pathParams: ['id', 'subpath'], operations: ['compact', 'input_tokens'], bodyField: 'id', streamVar: { variable: POSITION, field: 'id' } },
  modelList: openaiModelList,
  modelInfo: openaiModel,
  modelListUpstream: openaiModelListUpstream,
};
