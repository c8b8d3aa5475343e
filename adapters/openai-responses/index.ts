// OpenAI Responses: where the model and stream flag are, usage (body and terminal event), error envelopes, keepalive.
import type { FormatAdapter } from '../../core/types.ts';
import { openaiErrorBody } from '../shared/openai-errors.ts';
import { openaiModel, openaiModelList } from '../shared/openai-models.ts';
import { openaiTokenUsage } from '../shared/openai-usage.ts';
import { POSITION, responsesStreamError, scanResponsesStream } from './stream.ts';

export const openaiResponses: FormatAdapter = {
  name: 'openai-responses',
  platforms: ['openai'],
  upstreamAuth: 'bearer',
  model: { body: 'model' },
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
  // Stored responses live on the upstream account that created them.
  pins: { requestField: 'previous_response_id', pathParams: ['id', 'subpath'], bodyField: 'id', streamFlag: { flag: POSITION, field: 'id' } },
  modelList: openaiModelList,
  modelInfo: openaiModel,
};
