// Anthropic Messages: where the model and stream flag are, usage (body and stream), error envelopes, ping keepalive, model list shape.
import type { GatewayError } from '../../core/errors.ts';
import type { FormatAdapter } from '../../core/types.ts';
import { formatFrame } from '../shared/sse.ts';
import { anthropicModel, anthropicModelList, anthropicModelListUpstream } from './models.ts';
import { scanMessagesStream } from './stream.ts';
import { anthropicUsage } from './usage.ts';
import { errorType } from './errors.ts';
import { REQUEST_HEADERS, RESPONSE_HEADERS } from '../shared/headers.ts';
import { codec } from './codec/index.ts';

// `code` is not part of Anthropic's envelope: the SDK ignores it, while tooling can still tell gateway refusals apart.
const errorObject = (err: GatewayError) => ({
  type: errorType(err.status),
  message: err.message,
  code: err.code,
});

export const anthropicMessages: FormatAdapter = {
  name: 'anthropic-messages',
  codec,
  operation: (path) => (/\/messages$/.test(path) ? 'generate' : /\/messages\/count_tokens$/.test(path) ? 'count_tokens' : undefined),
  platforms: ['anthropic'],
  upstreamAuth: 'x-api-key',
  model: { body: 'model' },
  jsonBody: true,
  // The API version and betas, and Claude Code's own app and session headers.
  forwardHeaders: [...REQUEST_HEADERS, 'anthropic-version', 'anthropic-beta', 'x-app', 'x-claude-code-session-id', 'x-client-request-id'],
  returnHeaders: RESPONSE_HEADERS,
  // The SDK reports `request-id` as the request's id (message._request_id, errors): the gateway's own.
  idHeader: 'request-id',
  // ?beta=true, which Claude Code sends.
  forwardQuery: ['beta'],
  credentialCheck: { path: '/v1/models', headers: { 'anthropic-version': '2023-06-01' } },
  // max_tokens is typed but not required: count_tokens shares this format and has none (docs/wire-formats.md#anthropic-messages); the upstream insists on it for /v1/messages.
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
  probe: {
    path: () => '/v1/messages',
    body: (model) => ({ model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] }),
    headers: { 'anthropic-version': '2023-06-01' },
  },
  modelList: anthropicModelList,
  modelInfo: anthropicModel,
  modelListUpstream: anthropicModelListUpstream,
};
