// Which client formats reach a group: the one rule, read by group-check (may this route serve the group, and how?) and by
// list-models (which models does a format's list show?).
import type { Ctx, Env, FormatAdapter, GroupConfig, PlatformConfig } from '../core/types.ts';

/** How a client format reaches a group: natively (relayed byte for byte), or translated into `upstream`. */
export type Reach = { native: true } | { native: false; upstream: FormatAdapter };

const NATIVE: Reach = { native: true };

/** The format a group's translated requests are sent in: its upstream_format, else the platform's first with a codec. */
export function upstreamFormatOf(group: GroupConfig, platform: PlatformConfig, formats: Record<string, FormatAdapter>): FormatAdapter | undefined {
  const name = group.upstream_format ?? platform.formats?.find((f) => formats[f]?.codec);
  return name === undefined ? undefined : formats[name];
}

/**
 * A format reaches a group the group accepts it from (client_formats, default all) when the platform serves it
 * natively, or when both it and one of the platform's formats have a codec. `routePath` narrows this to one route: a
 * route the codec does not translate (a Gemini embedding, a stored-response read) is reached only natively.
 */
export function reach(group: GroupConfig, platform: PlatformConfig, format: FormatAdapter,
  formats: Record<string, FormatAdapter>, routePath?: string): Reach | undefined {
  if (group.client_formats && !group.client_formats.includes(format.name)) return undefined;
  if (platform.formats?.includes(format.name)) return NATIVE;
  if (!format.codec || (routePath !== undefined && format.operation?.(routePath) === undefined)) return undefined;
  const upstream = upstreamFormatOf(group, platform, formats);
  return upstream?.codec ? { native: false, upstream } : undefined;
}

/**
 * Where the platform's kind speaks a format per model (Vertex: Claude models in Messages, the others in Gemini's), the
 * request goes in that one: natively when it is the client's, else translated (the client's format permitting).
 */
export function reachModel(ctx: Ctx, env: Pick<Env, 'kinds' | 'formats'>): void {
  const platform = ctx.platform;
  const kind = platform?.kind === undefined ? undefined : env.kinds?.[platform.kind];
  const model = ctx.upstreamModel ?? ctx.model;
  const wanted = model === undefined ? undefined : kind?.formatFor?.(model, platform!.kind_options ?? {});
  if (wanted === undefined || wanted === (ctx.upstreamFormat ?? ctx.format).name) return;
  if (wanted === ctx.format.name) { ctx.upstreamFormat = undefined; return; }
  const upstream = env.formats[wanted];
  if (upstream?.codec && ctx.format.codec && ctx.format.operation?.(ctx.route.path) !== undefined) ctx.upstreamFormat = upstream;
}
