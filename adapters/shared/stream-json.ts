// Helpers the stream scanners share: which model name to write back to the client, and a tolerant parse of one frame's JSON.
import type { Ctx } from '../../core/types.ts';

/** The client's model name when an alias was applied upstream (so responses must be rewritten), else undefined. */
export const clientModelRewrite = (ctx: Ctx): string | undefined =>
  ctx.model !== undefined && ctx.upstreamModel !== undefined && ctx.model !== ctx.upstreamModel ? ctx.model : undefined;

/** A frame's data as a JSON object, or undefined when it is not one (upstream noise must never break the relay). */
export function parseObject(data: string): Record<string, any> | undefined {
  if (data === '') return undefined;
  try {
    const value = JSON.parse(data);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
