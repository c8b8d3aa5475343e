// The account test (POST /admin/accounts/{id}/test): one minimal request of the platform's native format, sent straight
// to that account's base URL with its credential. Not a client request: no key, no ledger, no cool-down, no slot.
import { adminErrors } from './errors.ts';
import { modelErrors } from '../model-allowlist.ts';
import type { AccountConfig, Env, FormatAdapter, GroupConfig } from '../../core/types.ts';
import { mapModel } from '../globs.ts';
import { CredentialFailure } from '../../core/credentials.ts';
import { credentialOf, finishRequest } from '../upstream-access.ts';

export interface TestTarget { group: GroupConfig; account: AccountConfig }

const GLOB = /[*?[\]]/;

/**
 * The model a test asks for when none is named: the first concrete name the account (else the group) serves, else the
 * first alias; as sent upstream (group then account model_map). Undefined when the group lists only patterns.
 */
export function testModel({ group, account }: TestTarget): string | undefined {
  const named = [...(account.models ?? group.models), ...Object.keys(group.model_map)].find((m) => !GLOB.test(m));
  if (named === undefined) return undefined;
  const upstream = mapModel(group.model_map, named) ?? named;
  return account.model_map?.[upstream] ?? upstream;
}

/** The first format of the group's platform that has a probe. */
function probeFormat(env: Env, group: GroupConfig): FormatAdapter {
  const platform = env.config.platforms[group.platform];
  const format = (platform.formats ?? []).map((f) => env.formats[f]).find((f) => f?.probe);
  if (!format) throw adminErrors.no_test_request({ platform: platform.name, formats: (platform.formats ?? []).join(', ') });
  return format;
}

/** The upstream's own error message, if its body has one; never the credential. */
function upstreamMessage(text: string, credential: string): string | null {
  let message: unknown;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const e = Array.isArray(body) ? body[0]?.error : body.error;
    message = typeof e === 'string' ? e : (e as { message?: unknown } | undefined)?.message ?? body.message;
  } catch { message = text; }
  if (typeof message !== 'string' || !message) return null;
  return (credential ? message.split(credential).join('[credential]') : message).slice(0, 300);
}

export async function testAccount(env: Env, target: TestTarget, model: string | undefined, timeoutMs: number) {
  const { group, account } = target;
  if (!account.credential && !account.source && env.config.platforms[group.platform]?.auth !== 'none') throw adminErrors.account_without_credential(account.id);
  const chosen = model ?? testModel(target);
  if (!chosen) throw modelErrors.model_required(`Group "${group.name}" lists only model patterns: name the model to test with`, { param: 'model' });
  const format = probeFormat(env, group);
  const probe = format.probe!;
  const platform = env.config.platforms[group.platform];
  const path = probe.path(chosen);
  const started = performance.now();
  const result = { group: group.name, account: account.id, format: format.name, model: chosen, path };
  let secret = account.credential;
  try {
    const body = Buffer.from(JSON.stringify(probe.body(chosen)));
    const out = await finishRequest(env, { platform, group: group.name, account, format, model: chosen },
      { method: 'POST', path, headers: { ...probe.headers, 'content-type': 'application/json', 'accept-encoding': 'identity' }, body });
    secret = (await credentialOf(env, { platform, group: group.name, account })).secret;
    // The body as the kind sent and signed it (a kind may rewrite it); fetch sets its length itself.
    const { 'content-length': _length, ...headers } = out.headers as Record<string, string>;
    const res = await fetch(`${account.base_url ?? platform.base_url}${out.path}`, {
      method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs), headers, body: Buffer.isBuffer(out.body) ? out.body as Buffer<ArrayBuffer> : body,
    });
    const text = await res.text();
    const ok = res.status >= 200 && res.status < 300;
    return { ...result, ok, status: res.status, duration_ms: Math.round(performance.now() - started), message: ok ? null : upstreamMessage(text, secret) };
  } catch (err) {
    if (err instanceof CredentialFailure) return { ...result, ok: false, status: 0, duration_ms: Math.round(performance.now() - started), message: `The credential could not be obtained: ${err.message}` };
    const e = err as Error & { cause?: { code?: string } };
    const message = e.name === 'TimeoutError' ? `No answer within ${timeoutMs} ms` : `Could not reach the upstream: ${e.cause?.code ?? e.message}`;
    return { ...result, ok: false, status: 0, duration_ms: Math.round(performance.now() - started), message };
  }
}
