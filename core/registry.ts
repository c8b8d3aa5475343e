// The only place that knows the plugin and adapter lists (static index files) and the built-in simulator.
import { plugins as pluginList } from '../plugins/index.ts';
import { formats as formatList, upstreamAuth } from '../adapters/index.ts';
import type { FormatAdapter, Plugin } from './types.ts';

export const plugins: Record<string, Plugin> = Object.fromEntries(pluginList.map((p) => [p.name, p]));
export const formats: Record<string, FormatAdapter> = Object.fromEntries(formatList.map((f) => [f.name, f]));
export { upstreamAuth };

type StartSimulator = typeof import('../simulator/server.ts').startSimulator;
const simulator = () => import('../simulator/server.ts');
/**
 * The built-in simulator, loaded only when a platform of the config asks for one: a gateway without one never loads its
 * modules (30, ~150 KB of source, resident for the life of the process).
 */
export const startSimulator = async (...args: Parameters<StartSimulator>): ReturnType<StartSimulator> =>
  (await simulator()).startSimulator(...args);
/** Its modules without a simulator started: `--check` loads what the config will run, so a build's compile cache holds them. */
export const loadSimulator = async (): Promise<void> => { await simulator(); };
