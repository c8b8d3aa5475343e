// Anthropic's model list: its shape for clients, and where Anthropic lists an account's models (docs/wire-formats.md#anthropic-models).
import type { ModelListEntry, ModelListUpstream } from '../../core/types.ts';
import { idsOf } from '../shared/model-ids.ts';

// A fixed creation time: the gateway does not know when an upstream model was created, and clients only display it.
const CREATED_AT = '2024-01-01T00:00:00Z';
export const anthropicModel = (m: ModelListEntry) => ({ type: 'model', id: m.id, display_name: m.id, created_at: CREATED_AT });

export const anthropicModelList = (models: ModelListEntry[]) => ({
  data: models.map(anthropicModel),
  has_more: false,
  first_id: models[0]?.id ?? null,
  last_id: models.at(-1)?.id ?? null,
});

// The largest page Anthropic serves; the list is walked forward with after_id while has_more.
const PAGE = '/v1/models?limit=1000';

export const anthropicModelListUpstream: ModelListUpstream = {
  path: PAGE,
  // The same path lists OpenAI's models on a platform that serves both; this header asks for Anthropic's.
  headers: { 'anthropic-version': '2023-06-01' },
  page(body) {
    const page = body as { data?: unknown; has_more?: unknown; last_id?: unknown } | null;
    const ids = idsOf(page?.data, 'id');
    const last = typeof page?.last_id === 'string' ? page.last_id : ids.at(-1);
    return { ids, next: page?.has_more === true && last ? `${PAGE}&after_id=${encodeURIComponent(last)}` : undefined };
  },
};
