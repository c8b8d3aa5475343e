// OpenAI's model list shape ({object:"list", data:[Model]}), shared by every OpenAI-family format.
import type { ModelListEntry } from '../../core/types.ts';

// A fixed creation time: the gateway does not know when an upstream model was created, and clients only display it.
const CREATED = 1704067200;

export const openaiModel = (m: ModelListEntry) => ({ id: m.id, object: 'model', created: CREATED, owned_by: m.owner });

export const openaiModelList = (models: ModelListEntry[]) => ({ object: 'list', data: models.map(openaiModel) });
