// Brute-force throttling of one kind of credential (model API keys, the admin token): invalid attempts are counted per
// client address, in memory, per process. Past slow_after the answers are delayed, past block_after the address's
// invalid attempts are refused for block_ms. Only invalid attempts ask: a valid credential is never slowed or refused.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { throttleSubject } from './client-address.ts';
import { counter, type LabelledCounter } from './plugin-metrics.ts';
import type { CredentialThrottle, ThrottleRule } from './types.ts';

interface Seen { count: number; since: number; blockedUntil: number }

const WHAT = { key: 'invalid API keys', admin: 'invalid admin tokens' } as const;

export class AuthThrottle implements CredentialThrottle {
  readonly #credential: keyof typeof WHAT;
  readonly #log: Logger;
  readonly #counted: LabelledCounter<'credential' | 'action'>;
  /** By subject (throttleSubject), least recently seen first: a Map's order, refreshed by delete and set. */
  readonly #seen = new Map<string, Seen>();
  #rule: ThrottleRule;
  #max: number;

  constructor(credential: keyof typeof WHAT, rule: ThrottleRule, maxAddresses: number, log: Logger, registry: Registry) {
    this.#credential = credential;
    this.#rule = rule;
    this.#max = maxAddresses;
    this.#log = log;
    this.#counted = counter(registry, {
      name: 'gateway_auth_throttle_total', labelNames: ['credential', 'action'],
      help: 'Invalid credentials throttled, by kind (key, admin) and action: slowed (answer delayed), blocked (an address refused from now on, once per block), refused (429).',
    });
  }

  /** A reload's rule; the counts so far stay. */
  configure(rule: ThrottleRule, maxAddresses: number): void {
    this.#rule = rule;
    this.#max = maxAddresses;
    this.#trim();
  }

  /** Addresses tracked now. */
  get size(): number { return this.#seen.size; }

  failed(address: string, now = Date.now()): { blockedMs: number } | { delayMs: number } {
    const rule = this.#rule;
    const subject = throttleSubject(address);
    let seen = this.#seen.get(subject);
    this.#seen.delete(subject);
    if (seen && seen.blockedUntil > now) {
      this.#seen.set(subject, seen);
      this.#counted.inc({ credential: this.#credential, action: 'refused' });
      return { blockedMs: seen.blockedUntil - now };
    }
    // A block that ended, or a window that passed, starts the count again.
    if (!seen || seen.blockedUntil || now - seen.since >= rule.window_ms) seen = { count: 0, since: now, blockedUntil: 0 };
    seen.count++;
    this.#seen.set(subject, seen);
    this.#trim();
    if (rule.block_after > 0 && seen.count > rule.block_after) {
      seen.blockedUntil = now + rule.block_ms;
      this.#counted.inc({ credential: this.#credential, action: 'blocked' });
      this.#counted.inc({ credential: this.#credential, action: 'refused' });
      this.#log.warn({ kind: this.#credential, client: address, throttled: subject, failures: seen.count - 1, block_ms: rule.block_ms },
        `${WHAT[this.#credential]} from ${subject}: its invalid attempts are refused (429) for ${Math.round(rule.block_ms / 1000)} s`);
      return { blockedMs: rule.block_ms };
    }
    if (rule.slow_after > 0 && seen.count > rule.slow_after) {
      this.#counted.inc({ credential: this.#credential, action: 'slowed' });
      return { delayMs: Math.min(rule.max_delay_ms, rule.delay_ms * (seen.count - rule.slow_after)) };
    }
    return { delayMs: 0 };
  }

  /** The least recently seen go first once there are more than max_addresses. */
  #trim(): void {
    for (const oldest of this.#seen.keys()) {
      if (this.#seen.size <= this.#max) break;
      this.#seen.delete(oldest);
    }
  }
}

/**
 * The answer to an invalid credential from `address`: `invalid` after the throttle's delay, or `refused` (with the
 * seconds the block has left) while the address is blocked.
 */
export async function throttled(throttle: CredentialThrottle, address: string, invalid: () => Error, refused: (seconds: number) => Error): Promise<Error> {
  const verdict = throttle.failed(address);
  if ('blockedMs' in verdict) return refused(Math.max(1, Math.ceil(verdict.blockedMs / 1000)));
  if (verdict.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, verdict.delayMs));
  return invalid();
}
