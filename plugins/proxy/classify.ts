// The one upstream error classifier, for every format: what failed → switch account or not, and how long the account cools down.
import type { IncomingHttpHeaders } from 'node:http';
import type { CooldownReason } from '../../core/store/types.ts';

/** How one attempt ended, as recorded in ctx.attempts and counted in metrics. */
export type AttemptReason =
  | 'ok' | 'client_error' | 'rate_limited' | 'overloaded' | 'auth' | 'upstream_error' | 'unreachable' | 'timeout' | 'stream_error' | 'credential';

/** What went wrong with one attempt: an answer's status, or a failure that produced none (or an error inside a 200 stream). */
export type Failure =
  | { kind: 'status'; status: number; headers: IncomingHttpHeaders }
  | { kind: 'connect' }
  | { kind: 'timeout' }
  | { kind: 'stream_error'; message: string };

export interface CooldownOptions {
  rate_limit_fallback_ms: number;
  overload_ms: number;
  auth_pause_ms: number;
  error_ms: number;
  unreachable_ms: number;
}

export interface Verdict {
  /** Try the next account (when the client has seen nothing yet). */
  failover: boolean;
  reason: AttemptReason;
  /** Take the account out of scheduling for this long (0 = not at all). */
  cooldownMs: number;
  cooldownReason: CooldownReason;
}

interface Rule { reason: Exclude<AttemptReason, 'ok' | 'client_error'>; cooldown: CooldownReason; ms: (o: CooldownOptions, f: Failure, now: number) => number }

const RULES = {
  rate_limited: { reason: 'rate_limited', cooldown: 'rate_limited', ms: (o, f, now) => (f.kind === 'status' ? resetMs(f.headers, now) : undefined) ?? o.rate_limit_fallback_ms },
  overloaded: { reason: 'overloaded', cooldown: 'overloaded', ms: (o) => o.overload_ms },
  auth: { reason: 'auth', cooldown: 'auth', ms: (o) => o.auth_pause_ms },
  upstream_error: { reason: 'upstream_error', cooldown: 'upstream_error', ms: (o) => o.error_ms },
  unreachable: { reason: 'unreachable', cooldown: 'unreachable', ms: (o) => o.unreachable_ms },
  timeout: { reason: 'timeout', cooldown: 'unreachable', ms: (o) => o.unreachable_ms },
  stream_error: { reason: 'stream_error', cooldown: 'upstream_error', ms: (o) => o.error_ms },
} satisfies Record<string, Rule>;

/** Statuses that switch accounts; any other 5xx is an upstream error, every other status passes through. */
const BY_STATUS: Record<number, Rule> = { 401: RULES.auth, 403: RULES.auth, 429: RULES.rate_limited, 529: RULES.overloaded };

/** An error event inside a 200 stream says what it is only in words (e.g. a Responses response.failed "model at capacity"). */
const STREAM_WORDS: [RegExp, Rule][] = [
  [/rate.?limit|too many requests|quota/i, RULES.rate_limited],
  [/overload|capacity/i, RULES.overloaded],
];

function ruleFor(f: Failure): Rule | undefined {
  switch (f.kind) {
    case 'connect': return RULES.unreachable;
    case 'timeout': return RULES.timeout;
    case 'stream_error': return STREAM_WORDS.find(([re]) => re.test(f.message))?.[1] ?? RULES.stream_error;
    case 'status': return BY_STATUS[f.status] ?? (f.status >= 500 ? RULES.upstream_error : undefined);
  }
}

/**
 * `kindReset`: the platform kind's own reading of when a 429's limit resets (headers only its cloud sends), asked when
 * none of the common headers says.
 */
export function classify(f: Failure, options: CooldownOptions, now = Date.now(), kindReset?: (headers: IncomingHttpHeaders) => number | undefined): Verdict {
  const rule = ruleFor(f);
  if (rule === RULES.rate_limited && kindReset && f.kind === 'status' && resetMs(f.headers, now) === undefined) {
    const ms = kindReset(f.headers);
    if (ms !== undefined) return { failover: true, reason: rule.reason, cooldownMs: Math.min(MAX_RESET_MS, Math.max(0, Math.ceil(ms))), cooldownReason: rule.cooldown };
  }
  if (!rule) return { failover: false, reason: f.kind === 'status' && f.status < 400 ? 'ok' : 'client_error', cooldownMs: 0, cooldownReason: 'upstream_error' };
  return { failover: true, reason: rule.reason, cooldownMs: Math.max(0, rule.ms(options, f, now)), cooldownReason: rule.cooldown };
}

// ---- when the upstream says its limit resets ----

/** A reset further away than this is treated as a misread header, not a day-long pause. */
const MAX_RESET_MS = 86_400_000;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)?.trim() || undefined;

/** `retry-after`: delay seconds or an HTTP date. */
function retryAfter(value: string, now: number): number | undefined {
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at - now;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** OpenAI `x-ratelimit-reset-*`: a Go-style duration such as `1s`, `6m0s`, `1m30.5s`, `20ms`. */
export function durationMs(value: string): number | undefined {
  const parts = /^(?:(\d+(?:\.\d+)?)(ms|h|m|s))+$/.test(value) ? value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g) : undefined;
  if (!parts) return /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : undefined;
  let ms = 0;
  for (const [, n, unit] of parts) ms += Number(n) * UNIT_MS[unit];
  return ms;
}

/** Anthropic `anthropic-ratelimit-*-reset`: an RFC 3339 time (the unified limit also sends epoch seconds). */
function resetAt(value: string, now: number): number | undefined {
  if (/^\d{9,}$/.test(value)) return Number(value) * 1000 - now;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at - now;
}

// The windows a 429 may name, each with the header saying whether it is the one exhausted.
const WINDOWS: { reset: string; remaining?: string; parse: (v: string, now: number) => number | undefined }[] = [
  { reset: 'x-ratelimit-reset-requests', remaining: 'x-ratelimit-remaining-requests', parse: durationMs },
  { reset: 'x-ratelimit-reset-tokens', remaining: 'x-ratelimit-remaining-tokens', parse: durationMs },
  { reset: 'anthropic-ratelimit-requests-reset', remaining: 'anthropic-ratelimit-requests-remaining', parse: resetAt },
  { reset: 'anthropic-ratelimit-tokens-reset', remaining: 'anthropic-ratelimit-tokens-remaining', parse: resetAt },
  { reset: 'anthropic-ratelimit-input-tokens-reset', remaining: 'anthropic-ratelimit-input-tokens-remaining', parse: resetAt },
  { reset: 'anthropic-ratelimit-output-tokens-reset', remaining: 'anthropic-ratelimit-output-tokens-remaining', parse: resetAt },
  { reset: 'anthropic-ratelimit-unified-reset', parse: resetAt },
];

/**
 * Milliseconds until the limit a 429 hit resets, from what the upstream announced: `retry-after-ms`, then `retry-after`,
 * then the per-window reset headers (the windows reported exhausted; when none says so, the latest reset). Undefined
 * when nothing usable was sent.
 */
export function resetMs(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const clamp = (ms: number | undefined) => (ms === undefined || !Number.isFinite(ms) ? undefined : Math.min(MAX_RESET_MS, Math.max(0, Math.ceil(ms))));
  const ms = one(headers['retry-after-ms']);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return clamp(Number(ms));
  const after = one(headers['retry-after']);
  const fromAfter = after === undefined ? undefined : retryAfter(after, now);
  if (fromAfter !== undefined) return clamp(fromAfter);
  let exhausted: number | undefined;
  let latest: number | undefined;
  for (const w of WINDOWS) {
    const value = one(headers[w.reset]);
    const at = value === undefined ? undefined : w.parse(value, now);
    if (at === undefined) continue;
    latest = Math.max(latest ?? -Infinity, at);
    if (w.remaining !== undefined && one(headers[w.remaining]) === '0') exhausted = Math.max(exhausted ?? -Infinity, at);
  }
  return clamp(exhausted ?? latest);
}
