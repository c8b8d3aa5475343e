// A gateway with one group per upstream format, each on a simulator platform that speaks only that format, and one key
// per group: every client format reaches every group, natively or translated. Shared by the bridge's end-to-end tests.
import type { Gateway } from '../../app/gateway.ts';
import { withGateway } from '../helpers/gateway.ts';

/** Upstream format → the key of the group whose platform speaks only it. */
export const KEYS = {
  'openai-chat': 'sk-up-chat-0001',
  'openai-responses': 'sk-up-responses-0002',
  'anthropic-messages': 'sk-up-anthropic-0003',
  gemini: 'sk-up-gemini-0004',
} as const;
export type UpstreamFormat = keyof typeof KEYS;
/** A second key of the Anthropic group: state kept for one key is never another's. */
export const OTHER_ANTHROPIC_KEY = 'sk-up-anthropic-other-0005';
export const UPSTREAMS = Object.keys(KEYS) as UpstreamFormat[];

/** The model each client asks for (every group serves all of them: the simulator answers any). */
export const MODELS = { 'openai-chat': 'gpt-5', 'openai-responses': 'gpt-5', 'anthropic-messages': 'claude-sonnet-4-5', gemini: 'gemini-2.5-flash' } as const;

const group = (name: string) => `
  g-${name}:
    platform: sim-${name}
    models: ["gpt-*", "claude-*", "gemini-*"]
    accounts:
      - { id: ${name}-1, credential: cred-${name}-1 }
      - { id: ${name}-2, credential: cred-${name}-2 }`;

export const bridgeConfig = (extra = '') => `
server: { host: 127.0.0.1, port: 0 }
store: { path: ":memory:" }
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
${UPSTREAMS.map((f) => `  sim-${f}: { simulator: true, format: [${f}] }`).join('\n')}
groups:${UPSTREAMS.map(group).join('')}
keys:
${UPSTREAMS.map((f) => `  - { id: k-${f}, key: ${KEYS[f]}, group: g-${f} }`).join('\n')}
  - { id: other-anthropic, key: ${OTHER_ANTHROPIC_KEY}, group: g-anthropic-messages }
pricing:
  "gpt-5*": { input: 1.25, output: 10.0, cache_read: 0.125 }
  "claude-sonnet-4-5*": { input: 3.0, output: 15.0, cache_read: 0.30, cache_write: 3.75 }
  "gemini-2.5-flash*": { input: 0.30, output: 2.50, cache_read: 0.075 }
pipelines:
  relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]
  passthrough: [auth, group-check, { proxy: { usage: false } }]
  gemini-relay: [{ auth: { query_key_paths: [/v1beta/] } }, group-check, { model-allowlist: { list_endpoint: /v1beta/models } }, rate-limit, metering, proxy]
routes:
  - { method: GET, path: /admin/usage, format: gateway, pipeline: [admin-auth, admin-usage] }
  - { method: POST, path: /v1/chat/completions, format: openai-chat, pipeline: relay }
  - { method: POST, path: /v1/responses, format: openai-responses, pipeline: relay }
  - { method: GET, path: "/v1/responses/{id}", format: openai-responses, pipeline: passthrough, params: { id: "[A-Za-z0-9_-]+" } }
  - { method: POST, path: /v1/responses/input_tokens, format: openai-responses, pipeline: relay, billed: false }
  - { method: POST, path: /v1/messages, format: anthropic-messages, pipeline: relay }
  - { method: POST, path: /v1/messages/count_tokens, format: anthropic-messages, pipeline: relay, billed: false }
  - { method: POST, path: "/v1beta/models/{model}:generateContent", format: gemini, pipeline: gemini-relay }
  - { method: POST, path: "/v1beta/models/{model}:streamGenerateContent", format: gemini, pipeline: gemini-relay }
  - { method: POST, path: "/v1beta/models/{model}:countTokens", format: gemini, pipeline: gemini-relay, billed: false }
${extra}`;

export const bridgeGateway = (t: { teardown(fn: () => unknown): void }, extra = ''): Promise<Gateway> => withGateway(t, bridgeConfig(extra));
