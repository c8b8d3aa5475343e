// Kind `azure-openai`: Azure OpenAI's v1 API (/openai/v1/..., the model is the deployment name) or its classic
// deployments API (/openai/deployments/{deployment}/...?api-version=), with an `api-key` or an Entra ID bearer token.
import type { IncomingHttpHeaders } from 'node:http';
import type { KindTarget, UpstreamKind } from '../../core/types.ts';

/** The api-version of the deployments API when the platform names none (the latest GA of the data plane). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Paths of the deployments API that name the deployment (the OpenAI path after /v1). */
const PER_DEPLOYMENT = /^\/(chat\/completions|completions|embeddings|images\/(?:generations|edits)|audio\/[a-z]+)$/;

function withQuery(path: string, params: Record<string, string | undefined>): string {
  const [bare, search = ''] = path.split('?', 2);
  const query = new URLSearchParams(search);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && !query.has(k)) query.set(k, v);
  const qs = query.toString();
  return qs ? `${bare}?${qs}` : bare;
}

function azurePath(t: KindTarget): string {
  const at = t.path.indexOf('?');
  const bare = at < 0 ? t.path : t.path.slice(0, at);
  const search = at < 0 ? '' : t.path.slice(at);
  const rest = bare.replace(/^\/v1(?=\/|$)/, '');
  if (t.options.api !== 'deployments') return withQuery(`/openai/v1${rest}${search}`, { 'api-version': t.options.api_version });
  const path = PER_DEPLOYMENT.test(rest) && t.model ? `/openai/deployments/${encodeURIComponent(t.model)}${rest}` : `/openai${rest}`;
  return withQuery(path + search, { 'api-version': t.options.api_version ?? AZURE_DEFAULT_API_VERSION });
}

/** Azure's throttling may name its wait only in its own header. */
function resetMs(headers: IncomingHttpHeaders): number | undefined {
  const v = headers['x-ms-retry-after-ms'];
  const one = Array.isArray(v) ? v[0] : v;
  return one !== undefined && /^\d+(\.\d+)?$/.test(one.trim()) ? Number(one) : undefined;
}

export const azureOpenai: UpstreamKind = {
  name: 'azure-openai',
  description: 'Azure OpenAI: chat completions, Responses, embeddings and images at the resource\'s /openai/ paths; the model sent is the deployment name (map client names with model_map).',
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      api: { type: 'string', enum: ['v1', 'deployments'], default: 'v1', description: 'azure-openai: v1 (/openai/v1/..., model = deployment) or deployments (/openai/deployments/{deployment}/...?api-version=).' },
      api_version: { type: 'string', minLength: 1, description: `azure-openai: the api-version query parameter (deployments API default ${AZURE_DEFAULT_API_VERSION}; the v1 API sends none unless set, e.g. preview).` },
    },
  },
  formats: () => ['openai-chat', 'openai-responses', 'openai-embeddings', 'openai-images'],
  auth: 'api-key',
  path: azurePath,
  resetMs,
};
