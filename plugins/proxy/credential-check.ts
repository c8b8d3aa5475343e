// Tells an account's failure from a request's. When an upstream refuses a request with 401/403, the account's credential
// is tried alone: the credentialCheck of the format the upstream speaks (never the client's, which a translated request
// does not share), a GET carrying nothing from any client. Only a refusal of that pauses the account: a client can never
// take an account offline with a request of its own, and a check that cannot tell pauses nothing.
import type { AccountConfig, Ctx, Env, GroupConfig } from '../../core/types.ts';
import type { Upstreams } from './attempt.ts';
import { CredentialFailure } from '../../core/credentials.ts';
import { finishRequest } from '../upstream-access.ts';

/** refused: the credential itself is refused; valid: it works, so the request was refused for what it is; unknown: no telling. */
export type CredentialVerdict = 'refused' | 'valid' | 'unknown';

/** A credential seen to work is trusted this long before it is checked again (a client cannot make a check per request). */
const VALID_FOR_MS = 30_000;
/** The longest a check may take. */
const CHECK_TIMEOUT_MS = 10_000;

export class CredentialChecks {
  readonly #env: Env;
  readonly #upstreams: Upstreams;
  readonly #running = new Map<string, Promise<CredentialVerdict>>();
  readonly #validUntil = new Map<string, number>();

  constructor(env: Env, upstreams: Upstreams) {
    this.#env = env;
    this.#upstreams = upstreams;
  }

  /** Whose failure a 401/403 on this account was, for this request. */
  async whose(ctx: Ctx, group: GroupConfig, account: AccountConfig): Promise<CredentialVerdict> {
    const id = `${group.name}\0${account.id}`;
    const now = Date.now();
    if ((this.#validUntil.get(id) ?? 0) > now) return 'valid';
    let running = this.#running.get(id);
    if (!running) {
      running = this.#check(ctx, account).finally(() => this.#running.delete(id));
      this.#running.set(id, running);
    }
    const verdict = await running;
    if (verdict === 'valid') this.#validUntil.set(id, now + VALID_FOR_MS);
    return verdict;
  }

  /** The upstream format's credential check on this account: nothing of the client's request goes into it. */
  async #check(ctx: Ctx, account: AccountConfig): Promise<CredentialVerdict> {
    const format = ctx.upstreamFormat ?? ctx.format;
    const check = format.credentialCheck;
    if (!check) return 'unknown';
    const platform = ctx.platform!;
    // A provider's token the upstream refused is not used again: the check (and the next request) gets a fresh one.
    if (account.source) this.#env.credentials?.forget(ctx.group!.name, account);
    let out;
    try {
      out = await finishRequest(this.#env, { platform, group: ctx.group!.name, account, format },
        { method: 'GET', path: check.path, headers: { accept: 'application/json', 'accept-encoding': 'identity', ...check.headers } });
    } catch (err) {
      if (err instanceof CredentialFailure) return 'refused';
      throw err;
    }
    const target = this.#upstreams.target(`${account.base_url ?? platform.base_url}${out.path}`);
    const status = (await this.#upstreams.status(target, out.headers as Record<string, string>, CHECK_TIMEOUT_MS)) ?? 0;
    return status === 401 || status === 403 ? 'refused' : status >= 200 && status < 300 ? 'valid' : 'unknown';
  }
}
