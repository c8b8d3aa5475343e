// The last step of every request to an upstream (a relayed one, a credential check, a model list, an account test): the
// platform's kind maps the path, the account's credential (static, or a provider's token) goes in its auth style, and
// the kind signs what leaves. The kind is a table entry (Env.kinds): nothing here names a vendor.
import type { IncomingHttpHeaders } from 'node:http';
import type { AccountConfig, AnswerDecoder, Env, FormatAdapter, IssuedCredential, KindTarget, LeavingRequest, PlatformConfig, UpstreamKind } from '../core/types.ts';

/** Whom a request is for: the platform (its kind), the group and account (the credential), the format and model sent. */
export interface AccessFor {
  platform: PlatformConfig;
  group: string;
  account: AccountConfig;
  format: FormatAdapter;
  model?: string;
  /** The request streams its answer (a kind may take streams at another path). */
  stream?: boolean;
}

export const kindOf = (env: Pick<Env, 'kinds'>, platform: PlatformConfig | undefined): UpstreamKind | undefined =>
  platform?.kind === undefined ? undefined : env.kinds?.[platform.kind];

/** The path a format's request takes on this platform (the kind's mapping, or the format's own path). */
export function kindPath(env: Pick<Env, 'kinds'>, a: Pick<AccessFor, 'platform' | 'format' | 'model'>, path: string): string {
  const kind = kindOf(env, a.platform);
  return kind?.path ? kind.path({ format: a.format.name, path, model: a.model, options: a.platform.kind_options ?? {} }) : path;
}

/** The account's credential now: its static secret, or a provider's token (cached; throws CredentialFailure). */
export function credentialOf(env: Pick<Env, 'credentials'>, a: Pick<AccessFor, 'group' | 'account' | 'platform'>): Promise<IssuedCredential> | IssuedCredential {
  if (!a.account.source || !env.credentials) return { secret: a.account.credential };
  return env.credentials.get(a.group, a.account, a.account.base_url ?? a.platform.base_url);
}

/** The credential's header in its style: the credential's own, the platform's, the kind's, else the format's; none for `none`. */
export function authHeader(env: Pick<Env, 'upstreamAuth' | 'kinds'>, a: Pick<AccessFor, 'platform' | 'format'>, credential: IssuedCredential): [string, string] | undefined {
  const name = credential.style ?? a.platform.auth ?? kindOf(env, a.platform)?.auth ?? a.format.upstreamAuth;
  const style = env.upstreamAuth[name];
  return style && style.header ? [style.header, style.value(credential.secret)] : undefined;
}

/**
 * Finishes a request for the upstream: `req.path` is the format's path (the kind maps it), `req.headers` carry no
 * credential yet. Returns the request with the body as the kind takes it, the path and credential set (and signed,
 * where the kind signs).
 */
export async function finishRequest(env: Pick<Env, 'upstreamAuth' | 'kinds' | 'credentials'>, a: AccessFor, req: LeavingRequest): Promise<LeavingRequest> {
  const kind = kindOf(env, a.platform);
  const target: KindTarget = { format: a.format.name, path: req.path, model: a.model, options: a.platform.kind_options ?? {}, stream: a.stream };
  const out: LeavingRequest = { ...req, headers: req.headers };
  // A kind that rewrites or signs the body needs its bytes whole (media fetched on the way is made here).
  if ((kind?.body || kind?.sign) && out.body && !Buffer.isBuffer(out.body)) out.body = await collect(out.body.chunks());
  const json = kind?.body && Buffer.isBuffer(out.body) && out.body.length > 0 ? parseObject(out.body) : undefined;
  if (json) {
    target.stream ??= json.stream === true;
    const next = kind!.body!(json, target, out.headers);
    if (next !== json) {
      out.body = Buffer.from(JSON.stringify(next));
      out.headers['content-length'] = String(out.body.length);
    }
  }
  const path = kind?.path ? kind.path(target) : req.path;
  out.path = path;
  const credential = await credentialOf(env, a);
  const header = authHeader(env, a, credential);
  if (header) out.headers[header[0]] = header[1];
  if (kind?.sign) await kind.sign(out, credential, { ...target, path, url: new URL(`${a.account.base_url ?? a.platform.base_url}${path}`) });
  return out;
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

function parseObject(bytes: Buffer): Record<string, any> | undefined {
  try {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, any> : undefined;
  } catch {
    return undefined;
  }
}

/** The kind's decoder of an answer in its own framing or error shape, if it has one for this answer. */
export function answerDecoder(kind: UpstreamKind, a: Pick<AccessFor, 'platform' | 'format' | 'model' | 'stream'>, path: string, status: number, headers: IncomingHttpHeaders): AnswerDecoder | undefined {
  return kind.decode?.({ status, headers }, { format: a.format.name, path, model: a.model, options: a.platform.kind_options ?? {}, stream: a.stream });
}
