// Gemini's model list: its shape for clients, and where Google lists an account's models (docs/wire-formats.md#gemini-models).
import type { ModelListEntry, ModelListUpstream } from '../../core/types.ts';
import { idsOf } from '../shared/model-ids.ts';

// The gateway knows names, not limits: these are the current Gemini models' published limits, which clients only display.
export const geminiModel = (m: ModelListEntry) => ({
  name: `models/${m.id}`,
  version: '001',
  displayName: m.id,
  description: `${m.id}, served through the gateway`,
  inputTokenLimit: 1_048_576,
  outputTokenLimit: 65_536,
  supportedGenerationMethods: ['generateContent', 'countTokens'],
});

export const geminiModelList = (models: ModelListEntry[]) => ({ models: models.map(geminiModel) });

// The largest page Google serves; nextPageToken is left out on the last page.
const PAGE = '/v1beta/models?pageSize=1000';

export const geminiModelListUpstream: ModelListUpstream = {
  path: PAGE,
  page(body) {
    const page = body as { models?: unknown; nextPageToken?: unknown } | null;
    const token = typeof page?.nextPageToken === 'string' && page.nextPageToken ? page.nextPageToken : undefined;
    return { ids: idsOf(page?.models, 'name', 'models/'), next: token && `${PAGE}&pageToken=${encodeURIComponent(token)}` };
  },
};
