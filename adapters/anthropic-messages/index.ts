// Anthropic Messages: where the model and stream flag are, usage (body and stream), error envelopes, ping keepalive, model list shape.
import type { GatewayError } from '../../core/errors.ts';
import type { FormatAdapter, ModelListEntry } from '../../core/types.ts';
import { formatFrame } from '../shared/sse.ts';
import { scanMessagesStream } from './stream.ts';
import { anthropicUsage } from './usage.ts';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error',
  404: 'not_found_error', 408: 'timeout_error', 413: 'request_too_large', 429: 'rate_limit_error',
  500: 'api_error', 502: 'api_error', 503: 'overloaded_error', 504: 'timeout_error', 529: 'overloaded_error',
};

// `code` is not part of Anthropic's envelope: the SDK ignores it, while tooling can still tell gateway refusals apart.
const errorObject = (err: GatewayError) => ({
  type: TYPE_BY_STATUS[err.status] ?? (err.status >= 500 ? 'api_error' : 'invalid_request_error'),
  message: err.message,
  code: err.code,
});

// A fixed creation time: the gateway does not know when an upstream model was created, and clients only display it.
const CREATED_AT = '2024-01-01T00:00:00Z';
const anthropicModel = (m: ModelListEntry) => ({ type: 'model', id: m.id, display_name: m.id, created_at: CREATED_AT });

export const anthropicMessages: FormatAdapter = {
  name: 'anthropic-messages',
  platforms: ['anthropic'],
  upstreamAuth: 'x-api-key',
  model: { body: 'model' },
  // max_tokens is typed but not required: count_tokens shares this format and has none (§5.5); the upstream insists on it for /v1/messages.
  requestSchema: {
    type: 'object', required: ['messages'],
    properties: {
      messages: { type: 'array' },
      max_tokens: { type: 'integer' },
      stream: { type: 'boolean' },
    },
  },
  isStream: (body) => body?.stream === true,
  usageFromBody: (json) => anthropicUsage((json as Record<string, unknown> | undefined)?.usage),
  incomplete: (json) => (json as Record<string, unknown> | undefined)?.stop_reason === 'max_tokens',
  scanStream: scanMessagesStream,
  setModel(json, model) { if (typeof json.model === 'string') json.model = model; },
  errorBody: (err, ctx) => ({ type: 'error', error: errorObject(err), request_id: ctx.id }),
  streamError: (err) => formatFrame(JSON.stringify({ type: 'error', error: errorObject(err) }), 'error'),
  keepalive: 'event: ping\ndata: {"type": "ping"}\n\n',
  modelList: (models) => ({
    data: models.map(anthropicModel),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  }),
  modelInfo: anthropicModel,
};
