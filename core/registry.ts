// The only place that knows the plugin and adapter lists (static index files) and the built-in simulator.
import { plugins as pluginList } from '../plugins/index.ts';
import { formats as formatList, upstreamAuth } from '../adapters/index.ts';
import type { FormatAdapter, Plugin } from './types.ts';

export const plugins: Record<string, Plugin> = Object.fromEntries(pluginList.map((p) => [p.name, p]));
export const formats: Record<string, FormatAdapter> = Object.fromEntries(formatList.map((f) => [f.name, f]));
export { upstreamAuth };

/**
 * The built-in simulator's module, loaded on first use: only when a platform of the config asks for one (a gateway
 * without one never holds its modules), and by `--check` for such a config, so that a build's
 * compile cache holds what the start runs.
 */
export const simulator = () => import('../simulator/server.ts');
