// How an account's credential is presented upstream, by auth style name (gateway.yaml platforms.*.auth).
import type { UpstreamAuthStyle } from '../../core/types.ts';

export const upstreamAuth: Record<string, UpstreamAuthStyle> = {
  bearer: { header: 'authorization', value: (c) => `Bearer ${c}` },
  'x-api-key': { header: 'x-api-key', value: (c) => c },
  'x-goog-api-key': { header: 'x-goog-api-key', value: (c) => c },
  'api-key': { header: 'api-key', value: (c) => c },
  // A server that takes no credential (a local vLLM or Ollama): nothing is sent.
  none: { header: '', value: () => '' },
};

/** Every header that can carry a client credential; none of them is ever forwarded upstream. */
export const clientCredentialHeaders = ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'proxy-authorization', 'cookie'];
