// Builds what goes upstream: the URL (the route's template with its captures re-encoded, the query parameters the format
// passes), the headers (the format's allow list, the account's credential), and the body bytes.
import type { IncomingHttpHeaders } from 'node:http';
import { headerMatcher } from '../../adapters/shared/headers.ts';
import type { Ctx, FormatAdapter, PlatformConfig } from '../../core/types.ts';
import { serialize } from '../../core/slices.ts';

/**
 * Upstream path: the route's upstream_path (or its own pattern) with {name} / *name filled from the captures, each
 * segment percent-encoded (the router refused separators and dot segments in captures, so a capture is always one
 * segment, or for *name whole segments), plus the query parameters the format passes.
 */
export function upstreamPath(ctx: Ctx): string {
  const modelParam = 'param' in ctx.format.model ? ctx.format.model.param : undefined;
  const template = ctx.route.upstream_path ?? ctx.route.path;
  // Most templates name nothing (/v1/chat/completions): no pattern to run.
  const path = !template.includes('{') && !template.includes('*') ? template : template.replace(/\{(\w+)\*?\}|\*(\w+)/g, (_m, one: string | undefined, rest: string | undefined) => {
    const name = (one ?? rest)!;
    // A model named in the path is sent as the upstream model (model_map applied).
    const value = name === modelParam && ctx.upstreamModel ? ctx.upstreamModel : (ctx.params[name] ?? '');
    return one ? encodeURIComponent(value) : value.split('/').map(encodeURIComponent).join('/');
  });
  const allowed = ctx.format.forwardQuery;
  if (!ctx.search || !allowed.length) return path;
  const given = new URLSearchParams(ctx.search);
  const query = new URLSearchParams();
  for (const [k, v] of given) if (allowed.includes(k)) query.append(k, v);
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Which client headers go upstream, compiled once per format and platform: the format's list, the platform's, and `extra`. */
export class HeaderAllowList {
  readonly #extra: string[];
  readonly #compiled = new WeakMap<PlatformConfig, Map<FormatAdapter, (name: string) => boolean>>();
  readonly #translated = new WeakMap<PlatformConfig, (name: string) => boolean>();
  constructor(extra: string[]) { this.#extra = extra; }

  for(format: FormatAdapter, platform: PlatformConfig): (name: string) => boolean {
    let byFormat = this.#compiled.get(platform);
    if (!byFormat) this.#compiled.set(platform, byFormat = new Map());
    let test = byFormat.get(format);
    if (!test) byFormat.set(format, test = headerMatcher([...format.forwardHeaders, ...platform.forward_headers, ...this.#extra]));
    return test;
  }

  /**
   * A translated request's: only what the platform itself lets through. The client's vendor headers (versions, betas)
   * mean nothing to another vendor; the headers the upstream format requires come from its codec.
   */
  translated(platform: PlatformConfig): (name: string) => boolean {
    let test = this.#translated.get(platform);
    if (!test) this.#translated.set(platform, test = headerMatcher(platform.forward_headers));
    return test;
  }
}

/**
 * The headers sent upstream: of the client's, only what the allow list names (never a client credential), and the
 * body's own length and type. The account's credential is put in last (plugins/upstream-access.ts).
 */
export function upstreamHeaders(given: IncomingHttpHeaders, body: Body, allowed: (name: string) => boolean): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  // Headers the client named in Connection are scoped to its own connection (RFC 9110 §7.6.1).
  const scoped = given.connection ? given.connection.toLowerCase().split(',').map((h) => h.trim()) : undefined;
  for (const name in given) {
    const value = given[name];
    if (value !== undefined && allowed(name) && !scoped?.includes(name)) headers[name] = value;
  }
  // Responses are scanned for usage, so they must arrive uncompressed.
  headers['accept-encoding'] = 'identity';
  if (body.bytes) headers['content-length'] = String(body.bytes.length);
  if (body.json) headers['content-type'] = 'application/json';
  return headers;
}

/** Bytes made only as they are sent (fetched media, base64-encoded on the way), of a length known before. */
export interface Chunked { length: number; chunks(): AsyncIterable<Buffer> }

/** A request body as it goes upstream: its bytes (none for GET), and whether it is JSON. */
export interface Body { bytes?: Buffer | Chunked; json: boolean }

/** The body to send: the original bytes when nothing changed, else the re-serialised JSON. */
export async function upstreamBody(ctx: Ctx): Promise<Body> {
  const method = ctx.req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return { json: false };
  const raw = await ctx.body();
  const type = String(ctx.req.headers['content-type'] ?? '');
  const jsonBody = ctx.format.jsonBody || (type.includes('json') && ctx.bodyChanged());
  if (!jsonBody || raw.length === 0) return { bytes: raw, json: false };
  const body = await ctx.json();
  const changed = ctx.format.prepareUpstream?.(body, ctx) === true || ctx.bodyChanged();
  return { bytes: changed ? await serialize(body) : raw, json: true };
}

/** The body for one account: re-serialised only when the account's own model_map names another model. */
export async function bodyForAccount(ctx: Ctx, base: Body, baseModel: string | undefined, model: string | undefined): Promise<Body> {
  const where = ctx.format.model;
  if (model === baseModel || model === undefined) return base;
  // A model in the path is re-filled by upstreamPath; the body changes only where the format names the model there too
  // (a Gemini batch names it per request: prepareUpstream writes it).
  if ('param' in where) return ctx.format.prepareUpstream ? upstreamBody(ctx) : base;
  if ('body' in where) return { bytes: await serialize({ ...(await ctx.json()), [where.body]: model }), json: true };
  await where.write?.(ctx, model);
  const body = await upstreamBody(ctx);
  await where.write?.(ctx, baseModel!);
  return body;
}
