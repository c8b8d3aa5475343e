// OpenAI's model list shape ({object:"list", data:[Model]}) and where OpenAI lists an account's models, shared by every OpenAI-family format.
import type { ModelListEntry, ModelListUpstream } from '../../core/types.ts';
import { idsOf } from './model-ids.ts';

// A fixed creation time: the gateway does not know when an upstream model was created, and clients only display it.
const CREATED = 1704067200;

export const openaiModel = (m: ModelListEntry) => ({ id: m.id, object: 'model', created: CREATED, owned_by: m.owner });

export const openaiModelList = (models: ModelListEntry[]) => ({ object: 'list', data: models.map(openaiModel) });

/** GET /v1/models: one page, no pagination (docs/wire-formats.md#openai-models). */
export const openaiModelListUpstream: ModelListUpstream = {
  path: '/v1/models',
  page: (body) => ({ ids: idsOf((body as { data?: unknown } | null)?.data, 'id') }),
};
