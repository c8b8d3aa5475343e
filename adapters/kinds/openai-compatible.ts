// Kind `openai-compatible`: any server that speaks OpenAI chat completions (vLLM, Ollama, LM Studio, a hosted provider),
// optionally Responses or embeddings (declared with the platform's `format`); `auth: none` or `bearer`. Clients of a
// format it lacks (a Responses client such as Codex) are translated to chat completions.
import type { UpstreamKind } from '../../core/types.ts';

export const openaiCompatible: UpstreamKind = {
  name: 'openai-compatible',
  description: 'A server speaking OpenAI chat completions at base_url + /v1/... (declare more with format); its own /v1/models lists its models.',
  schema: { type: 'object', additionalProperties: false, properties: {} },
  formats: () => ['openai-chat'],
  auth: 'bearer',
};
