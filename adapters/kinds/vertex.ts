// Kind `vertex`: Google Vertex AI, one platform for both publishers: Gemini models at
// /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent (:streamGenerateContent?alt=sse,
// :countTokens) and Claude models at .../publishers/anthropic/models/{m}:rawPredict (:streamRawPredict, count-tokens),
// the Messages body without `model` and with Vertex's anthropic_version. The bearer is a service-account token.
import type { KindTarget, UpstreamKind } from '../../core/types.ts';

/** The anthropic_version a Claude body on Vertex carries (in place of the anthropic-version header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Claude models are Anthropic's publisher on Vertex; every other model is Google's. */
const isClaude = (model: string) => /^claude-/i.test(model.replace(/^(publishers\/anthropic\/)?models\//, ''));

/** A model id in a path: `@` (Claude's version, claude-sonnet-4@20250514) stays as Vertex writes it. */
const segment = (model: string) => encodeURIComponent(model).replace(/%40/g, '@');

function host(region: string): string {
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
}

function vertexPath(t: KindTarget): string {
  const base = `/v1/projects/${encodeURIComponent(t.options.project)}/locations/${encodeURIComponent(t.options.region)}/publishers`;
  const at = t.path.indexOf('?');
  const bare = at < 0 ? t.path : t.path.slice(0, at);
  const search = at < 0 ? '' : t.path.slice(at);
  if (t.format === 'gemini') {
    const m = /^\/v1(?:beta)?\/models\/([^/:]+):([A-Za-z]+)$/.exec(bare);
    if (m) return `${base}/google/models/${m[1]}:${m[2]}${search}`;
  }
  if (t.format === 'anthropic-messages' && t.model) {
    if (bare === '/v1/messages/count_tokens') return `${base}/anthropic/models/count-tokens:rawPredict`;
    if (bare === '/v1/messages') return `${base}/anthropic/models/${segment(t.model)}:${t.stream ? 'streamRawPredict' : 'rawPredict'}`;
  }
  return t.path;
}

/** Vertex's Claude body: no `model` (the path names it) but for the count, which names it in the body; its own version. */
function vertexBody(json: Record<string, any>, t: KindTarget): Record<string, any> {
  if (t.format === 'anthropic-messages') {
    const count = t.path.split('?')[0] === '/v1/messages/count_tokens';
    const { model, ...rest } = json;
    return { ...(count ? { model: t.model ?? model } : {}), ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION };
  }
  // Vertex counts the request's own fields; the Gemini API's generateContentRequest wrapper it does not take.
  if (t.format === 'gemini' && /:countTokens$/.test(t.path.split('?')[0]) && json.generateContentRequest && typeof json.generateContentRequest === 'object') {
    const { model: _model, ...inner } = json.generateContentRequest as Record<string, any>;
    return inner;
  }
  return json;
}

export const vertex: UpstreamKind = {
  name: 'vertex',
  description: 'Google Vertex AI: Gemini models (publisher google) and Claude models (publisher anthropic, rawPredict) on one platform, with a service-account token.',
  schema: {
    type: 'object', additionalProperties: false, required: ['project', 'region'],
    properties: {
      project: { type: 'string', minLength: 1, pattern: '^[A-Za-z0-9._:-]+$', description: 'vertex: the Google Cloud project id.' },
      region: { type: 'string', minLength: 1, pattern: '^[a-z0-9-]+$', description: 'vertex: the location, e.g. us-east5, europe-west1, or global (host aiplatform.googleapis.com; a region\'s is REGION-aiplatform.googleapis.com).' },
    },
  },
  formats: () => ['gemini', 'anthropic-messages'],
  formatFor: (model) => (isClaude(model) ? 'anthropic-messages' : 'gemini'),
  auth: 'bearer',
  baseUrl: (o) => (typeof o.region === 'string' && /^[a-z0-9-]+$/.test(o.region) ? host(o.region) : undefined),
  path: vertexPath,
  body: vertexBody,
};
