// Anthropic models list (docs/wire-formats.md#anthropic-models), served on GET /v1/models when the caller sends anthropic-version.
import type { IncomingMessage } from 'node:http';
import type { Route, SimContext } from './context.ts';
import { sendError } from './errors.ts';
import { decodeSegment } from './models.ts';
import { sendJson } from './respond.ts';

// Newest first, as the real list is ordered.
export const anthropicModels = [
  { type: 'model', id: 'claude-haiku-4-5', display_name: 'Claude Haiku 4.5', created_at: '2025-10-15T00:00:00Z' },
  { type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { type: 'model', id: 'claude-opus-4-1', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' },
] as const;

// The same path serves OpenAI's list; only Anthropic's SDK sends this header.
const sendsVersion = (req: IncomingMessage) => req.headers['anthropic-version'] !== undefined;

export const anthropicModelRoutes: Route[] = [
  { method: 'GET', path: '/v1/models', when: sendsVersion, dialect: 'anthropic', auth: true, handler: listModels },
  { method: 'GET', path: /^\/v1\/models\/([^/]+)$/, when: sendsVersion, dialect: 'anthropic', auth: true, handler: getModel },
];

/** One page per `limit` (default 20), walked forward with after_id, as the SDK's paginator does. */
function listModels(ctx: SimContext): void {
  const limit = Math.min(Math.max(Number(ctx.query.get('limit')) || 20, 1), 1000);
  const afterId = ctx.query.get('after_id');
  const start = afterId === null ? 0 : anthropicModels.findIndex((m) => m.id === afterId) + 1;
  const data = anthropicModels.slice(start, start + limit);
  const last = data[data.length - 1];
  sendJson(ctx, 200, { data, has_more: start + limit < anthropicModels.length, first_id: data[0]?.id ?? null, last_id: last?.id ?? null });
}

function getModel(ctx: SimContext): void {
  const id = decodeSegment(ctx.params[0]);
  const model = anthropicModels.find((m) => m.id === id);
  if (model) return sendJson(ctx, 200, model);
  sendError(ctx.res, ctx.dialect, { status: 404, message: `model: ${id}` });
}
