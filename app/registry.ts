// The composition root's lists: the only place that reads the plugin and adapter index files (static lists) and knows
// the built-in simulator and the defaults file. Core takes them as its Parts, and imports nothing above itself.
import { fileURLToPath } from 'node:url';
import { plugins as pluginList } from '../plugins/index.ts';
import { formats as formatList, upstreamAuth } from '../adapters/index.ts';
import type { Parts } from '../core/server.ts';
import type { FormatAdapter, Plugin } from '../core/types.ts';
import type { Simulator } from '../simulator/server.ts';

export const plugins: Record<string, Plugin> = Object.fromEntries(pluginList.map((p) => [p.name, p]));
export const formats: Record<string, FormatAdapter> = Object.fromEntries(formatList.map((f) => [f.name, f]));
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
  plugins, formats, upstreamAuth, defaults,
  // A built-in simulator runs as long as the gateway: it keeps only its latest requests (GET /_simulator/requests).
  startSimulator: async () => (await simulator()).startSimulator({ host: '127.0.0.1', port: 0, maxRecorded: 1000 }),
};
