// OpenAI models list (docs/wire-formats.md#openai-models): a fixed catalogue, so list-models tests can assert exact ids.
import type { SimContext } from './context.ts';
import { sendError } from './errors.ts';
import { sendJson } from './respond.ts';

export const openaiModels = [
  { id: 'gpt-4o-mini', object: 'model', created: 1721172741, owned_by: 'system' },
  { id: 'gpt-4o', object: 'model', created: 1715367049, owned_by: 'system' },
  // The dated snapshot gateway.yaml's example model_map aliases gpt-4o to.
  { id: 'gpt-4o-2024-08-06', object: 'model', created: 1722814719, owned_by: 'system' },
  { id: 'gpt-5', object: 'model', created: 1754425777, owned_by: 'system' },
  { id: 'gpt-5-mini', object: 'model', created: 1754425928, owned_by: 'system' },
  { id: 'gpt-image-1', object: 'model', created: 1745517030, owned_by: 'system' },
  { id: 'text-embedding-3-small', object: 'model', created: 1705948997, owned_by: 'system' },
] as const;

export function listModels(ctx: SimContext): void {
  sendJson(ctx, 200, { object: 'list', data: openaiModels });
}

export function getModel(ctx: SimContext): void {
  const id = decodeSegment(ctx.params[0] ?? '');
  const model = openaiModels.find((m) => m.id === id);
  if (model) {
    sendJson(ctx, 200, model);
    return;
  }
  sendError(ctx.res, ctx.dialect, { status: 404, message: `The model '${id}' does not exist`, param: 'model', code: 'model_not_found' });
}

export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
