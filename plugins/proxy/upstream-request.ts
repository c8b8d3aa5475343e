// Builds what goes upstream: the URL (route template, client query minus keys), headers (client credentials replaced), body bytes.
import type { IncomingHttpHeaders } from 'node:http';
import { clientCredentialHeaders } from '../../adapters/shared/upstream-auth.ts';
import type { AccountConfig, Ctx, Env } from '../../core/types.ts';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length'];
const DROPPED = new Set([...HOP_BY_HOP, ...clientCredentialHeaders, 'x-request-id', 'accept-encoding', 'x-forwarded-for', 'forwarded']);
const QUERY_SECRETS = ['key', 'api_key'];

/** Upstream path: the route's upstream_path template (or the request path) with {name}/*name filled, plus the safe query. */
export function upstreamPath(ctx: Ctx): string {
  const modelParam = 'param' in ctx.format.model ? ctx.format.model.param : undefined;
  // A model named in the path and aliased by model_map is re-filled from the route pattern.
  const aliased = modelParam !== undefined && ctx.upstreamModel !== undefined && ctx.upstreamModel !== ctx.params[modelParam];
  const template = ctx.route.upstream_path ?? (aliased ? ctx.route.path : undefined);
  let path = ctx.path;
  if (template) {
    path = template.replace(/\{(\w+)\*?\}|\*(\w+)/g, (_m, one: string | undefined, rest: string | undefined) => {
      const name = (one ?? rest)!;
      const value = name === modelParam && ctx.upstreamModel ? ctx.upstreamModel : (ctx.params[name] ?? '');
      return one ? encodeURIComponent(value) : value;
    });
  }
  if (!ctx.search) return path;
  const query = new URLSearchParams(ctx.search);
  for (const k of QUERY_SECRETS) query.delete(k);
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

export function upstreamHeaders(ctx: Ctx, account: AccountConfig, env: Env, body: { bytes?: Buffer; json: boolean }): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  const given = ctx.req.headers;
  // Headers the client named in Connection are scoped to its own connection (RFC 9110 §7.6.1).
  const scoped = given.connection ? given.connection.toLowerCase().split(',').map((h) => h.trim()) : undefined;
  for (const name in given) {
    const value = given[name];
    if (!DROPPED.has(name) && !scoped?.includes(name) && value !== undefined) headers[name] = value;
  }
  const style = env.upstreamAuth[ctx.platform?.auth ?? ctx.format.upstreamAuth];
  headers[style.header] = style.value(account.credential);
  // Responses are scanned for usage, so they must arrive uncompressed.
  headers['accept-encoding'] = 'identity';
  if (body.bytes) headers['content-length'] = String(body.bytes.length);
  if (body.json) headers['content-type'] = 'application/json';
  return headers;
}

/** The body to send: the original bytes when nothing changed, else the re-serialised JSON. */
export async function upstreamBody(ctx: Ctx): Promise<{ bytes?: Buffer; json: boolean }> {
  const method = ctx.req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return { json: false };
  const raw = await ctx.body();
  const type = String(ctx.req.headers['content-type'] ?? '');
  const jsonBody = 'body' in ctx.format.model || (type.includes('json') && ctx.bodyChanged());
  if (!jsonBody || raw.length === 0) return { bytes: raw, json: false };
  let body: Record<string, unknown>;
  try { body = await ctx.json(); } catch { return { bytes: raw, json: false }; }
  const changed = ctx.format.prepareUpstream?.(body, ctx) === true || ctx.bodyChanged();
  return { bytes: changed ? Buffer.from(JSON.stringify(body)) : raw, json: true };
}
