// The composition root's lists: the only place that reads the plugin and adapter index files (static lists) and knows
// the built-in simulator and the defaults file. Core takes them as its Parts, and imports nothing above itself.
import { fileURLToPath } from 'node:url';
import { plugins as pluginList } from '../plugins/index.ts';
import { credentialSources as sourceList, formats as formatList, kinds as kindList, upstreamAuth } from '../adapters/index.ts';
import type { Parts } from '../core/server.ts';
import type { CredentialProvider, FormatAdapter, Plugin, UpstreamKind } from '../core/types.ts';
import type { Simulator } from '../simulator/server.ts';

export const plugins: Record<string, Plugin> = Object.fromEntries(pluginList.map((p) => [p.name, p]));
export const formats: Record<string, FormatAdapter> = Object.fromEntries(formatList.map((f) => [f.name, f]));
export const kinds: Record<string, UpstreamKind> = Object.fromEntries(kindList.map((k) => [k.name, k]));
export const credentialSources: Record<string, CredentialProvider> = Object.fromEntries(sourceList.map((c) => [c.name, c]));
export { upstreamAuth };

/** The routes and pipelines the gateway ships with; an operator's file gets or extends them (core/config-merge.ts). */
export const defaults = fileURLToPath(new URL('./defaults.yaml', import.meta.url));

/**
 * The built-in simulator's module, loaded on first use: only when a platform of the config asks for one (a gateway
 * without one never holds its modules), and by `--check` for such a config, so that a build's
 * compile cache holds what the start runs.
 */
export const simulator = () => import('../simulator/server.ts');

export const parts: Parts<Simulator> = {
  plugins, formats, upstreamAuth, kinds, credentialSources, defaults,
  // A built-in simulator runs as long as the gateway: it keeps only its latest requests (GET /_simulator/requests).
  startSimulator: async (platform) => (await simulator()).startSimulator({
    host: '127.0.0.1', port: 0, maxRecorded: 1000, kind: platform.kind, tokenTtlMs: platform.simulator_token_ttl_ms,
    awsKeys: platform.kind_options?.simulator_aws_keys as Record<string, string> | undefined,
  }),
};
