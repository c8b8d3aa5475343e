// Typed context variables (Ctx.get / Ctx.set): how stages hand values to one another (plugins/vars.ts) and how a format
// adapter keeps its per-request state, each under a token of its own, the way Hono middleware declares its variables.
import type { ContextVar } from './types.ts';

/** A variable token; `name` is unique per variable (stages' chains are checked by it, Plugin.provides). */
export const contextVar = <T>(name: string): ContextVar<T> => ({ name });
