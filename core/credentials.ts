// Credentials a provider obtains (the providers of adapters/credentials/), cached per account for
// the process: refreshed before they expire, one fetch however many requests wait, and after a failure not asked again
// before a backoff. Nothing here knows a vendor; the providers are a table handed in by the composition root.
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { AccountConfig, CredentialCache, CredentialProvider, IssuedCredential } from './types.ts';

/** A credential that could not be had: the account cools down with reason `credential` for `retryInMs`. */
export class CredentialFailure extends Error {
  readonly retryInMs: number;
  constructor(message: string, retryInMs: number) {
    super(message);
    this.name = 'CredentialFailure';
    this.retryInMs = retryInMs;
  }
}

/** Longest wait for a token endpoint. */
const OBTAIN_TIMEOUT_MS = 10_000;
/** Backoff after a failed refresh: doubled per failure in a row, from the first up to the last. */
export const BACKOFF = { firstMs: 1000, maxMs: 300_000 };
/** A credential is refreshed this share of its lifetime before it expires (at most REFRESH_AHEAD_MAX_MS before). */
const REFRESH_AHEAD_SHARE = 0.2;
const REFRESH_AHEAD_MAX_MS = 300_000;
/** ...and no longer used this share of its lifetime before it expires (clocks and the request's own time). */
const UNUSABLE_SHARE = 0.05;

interface Entry {
  /** The options it was obtained with: a reload that changes them starts afresh. */
  fingerprint: string;
  current?: IssuedCredential & { obtainedAt: number };
  refreshing?: Promise<IssuedCredential>;
  failures: number;
  retryAt: number;
  lastError?: string;
  /** What the last credential said the next obtain takes instead of the configured fields. */
  carry?: Record<string, string>;
}

export interface CredentialsOptions {
  providers: Record<string, CredentialProvider>;
  log: Pick<Logger, 'warn' | 'info'>;
  registry?: Registry;
  fetch?: typeof fetch;
  now?: () => number;
}

export class Credentials implements CredentialCache {
  readonly #providers: Record<string, CredentialProvider>;
  readonly #log: Pick<Logger, 'warn' | 'info'>;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #counted: Counter<'provider' | 'outcome'> | undefined;

  constructor(o: CredentialsOptions) {
    this.#providers = o.providers;
    this.#log = o.log;
    this.#fetch = o.fetch ?? fetch;
    this.#now = o.now ?? Date.now;
    this.#counted = o.registry && new Counter({
      name: 'gateway_credential_refreshes_total', help: 'Credentials obtained from a provider (token endpoint), by provider and outcome (ok, failed).',
      labelNames: ['provider', 'outcome'], registers: [o.registry],
    });
  }

  async get(group: string, account: AccountConfig, baseUrl?: string): Promise<IssuedCredential> {
    const source = account.source;
    if (!source) return { secret: account.credential };
    const e = this.#entry(group, account);
    const now = this.#now();
    const cur = e.current;
    if (cur && usable(cur, now)) {
      // Refreshed in the background before it expires: the request goes on with the one in hand.
      if (!e.refreshing && refreshDue(cur, now) && now >= e.retryAt) this.#refresh(e, group, account, baseUrl).catch(() => {});
      return cur;
    }
    if (e.refreshing) return e.refreshing;
    if (now < e.retryAt) throw new CredentialFailure(e.lastError ?? 'the credential could not be obtained', e.retryAt - now);
    return this.#refresh(e, group, account, baseUrl);
  }

  forget(group: string, account: AccountConfig): void {
    const e = this.#entries.get(`${group}\0${account.id}`);
    if (e) e.current = undefined;
  }

  #entry(group: string, account: AccountConfig): Entry {
    const id = `${group}\0${account.id}`;
    const fingerprint = JSON.stringify(account.source);
    let e = this.#entries.get(id);
    if (!e || e.fingerprint !== fingerprint) this.#entries.set(id, e = { fingerprint, failures: 0, retryAt: 0 });
    return e;
  }

  /** One fetch for all who wait: the promise is shared until it settles. */
  #refresh(e: Entry, group: string, account: AccountConfig, baseUrl?: string): Promise<IssuedCredential> {
    if (e.refreshing) return e.refreshing;
    const source = account.source!;
    const provider = this.#providers[source.type];
    const started = this.#now();
    e.refreshing = provider.obtain(e.carry ? { ...source.options, ...e.carry } : source.options, { fetch: this.#fetch, signal: AbortSignal.timeout(OBTAIN_TIMEOUT_MS), baseUrl, now: started })
      .then((issued) => {
        e.current = { ...issued, obtainedAt: started };
        if (issued.carry) e.carry = issued.carry;
        e.failures = 0;
        e.retryAt = 0;
        e.lastError = undefined;
        this.#counted?.inc({ provider: source.type, outcome: 'ok' });
        return issued;
      }, (err: unknown) => {
        e.failures++;
        const wait = Math.min(BACKOFF.maxMs, BACKOFF.firstMs * 2 ** (e.failures - 1));
        e.retryAt = this.#now() + wait;
        e.lastError = redact(`${source.type}: ${(err as Error)?.message ?? String(err)}`, source.options);
        this.#counted?.inc({ provider: source.type, outcome: 'failed' });
        this.#log.warn({ group, account: account.id, provider: source.type, failures: e.failures, retry_ms: wait, reason: e.lastError },
          `the credential of account "${account.id}" of group "${group}" could not be obtained`);
        throw new CredentialFailure(e.lastError, wait);
      })
      .finally(() => { e.refreshing = undefined; });
    return e.refreshing;
  }
}

function usable(c: IssuedCredential & { obtainedAt: number }, now: number): boolean {
  if (c.expiresAt === undefined) return true;
  return now < c.expiresAt - (c.expiresAt - c.obtainedAt) * UNUSABLE_SHARE;
}

function refreshDue(c: IssuedCredential & { obtainedAt: number }, now: number): boolean {
  if (c.expiresAt === undefined) return false;
  return now >= c.expiresAt - Math.min(REFRESH_AHEAD_MAX_MS, (c.expiresAt - c.obtainedAt) * REFRESH_AHEAD_SHARE);
}

/** Any secret-looking value of the source's options that an upstream echoed into an error message is cut out of it. */
export function redact(message: string, options: Record<string, unknown>): string {
  let out = message;
  for (const v of Object.values(options)) if (typeof v === 'string' && v.length >= 6) out = out.split(v).join('[redacted]');
  return out.slice(0, 300);
}
