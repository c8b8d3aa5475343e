// The gateway's own answers when the pool cannot serve a request: by class, never with upstream bodies, account ids or credentials.
import { defineErrors, type GatewayError } from '../../core/errors.ts';
import type { Attempt, GroupConfig } from '../../core/types.ts';
import type { AccountState, CooldownReason } from '../../core/store/types.ts';

/** The proxy's own answers (the catalogue's `proxy` area); each message is made where the situation is known. */
export const proxyErrors = defineErrors('proxy', {
  no_account_available: { wire: 'NO_ACCOUNT_AVAILABLE', status: 503, doc: 'No account of the group is enabled for the model, or every one is cooling down or needs attention (`retry-after` when one returns).', message: (text: string) => text },
  upstream_failed: { wire: 'UPSTREAM_FAILED', status: 502, doc: 'Every account tried failed at the upstream (5xx, overloaded, unreachable, timeout, stream error before content).', message: (text: string) => text },
  all_accounts_rate_limited: { wire: 'ALL_ACCOUNTS_RATE_LIMITED', status: 429, doc: 'Every account of the group is rate limited upstream (`retry-after`: the soonest end).', message: (text: string) => text },
  upstream_request_refused: { wire: 'UPSTREAM_REQUEST_REFUSED', status: 403, doc: 'The upstream refused the request itself (401/403 while the account\'s credential works, or on every account tried while no credential check could tell).', message: (text: string) => text },
  conversation_account_unavailable: { wire: 'CONVERSATION_ACCOUNT_UNAVAILABLE', status: 503, also: [409], doc: 'The account holding a pinned conversation is cooling down (503) or gone (409).', message: (text: string) => text },
  upstream_error: { status: 502, also: [400, 401, 403, 404, 429, 500, 503], doc: 'A stream already committed by queue keepalives got an upstream refusal: its status and message.', message: (text: string) => text },
  upstream_truncated: { status: 502, doc: 'A whole upstream answer ended before it was complete.', message: 'The upstream response ended before it was complete' },
  upstream_stream_truncated: { status: 502, doc: 'An upstream stream ended before its terminal event (sent as the format\'s stream error).', message: 'The upstream stream ended before it completed' },
  upstream_invalid: { status: 502, doc: 'A translated upstream answered with a body that is not JSON.', message: 'The upstream answered with a body that is not JSON' },
  previous_response_not_found: { status: 404, doc: 'A Responses request continues an answer this key was not given (another key\'s, unknown, or expired), before anything goes upstream.', message: (id: string) => `Previous response with id '${id}' not found.` },
  response_not_found: { status: 404, doc: 'GET or cancel of a stored Responses answer this key was not given (another key\'s, unknown, or expired), before anything goes upstream.', message: (id: string) => `Response with id '${id}' not found.` },
  media_fetch_failed: { status: 400, doc: 'An image or file URL for an inline-only upstream could not be fetched (private address, scheme, redirect, size, time, type), or the request\'s media together passed `media_max_total_bytes`; nothing was sent upstream or billed.', message: (p: { host: string; why: string }) => `Could not fetch the media at ${p.host}: ${p.why}. Send it inline (base64) instead.` },
});

/** Attempts that failed at the upstream itself (not a refused credential, not a rate limit). */
const UPSTREAM_FAILURES = new Set(['upstream_error', 'overloaded', 'unreachable', 'timeout', 'stream_error']);

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

const LAST: Record<string, string> = {
  upstream_error: 'an upstream server error', overloaded: 'the upstream was overloaded', unreachable: 'the upstream could not be reached',
  timeout: 'the upstream did not answer in time', stream_error: 'the upstream stream failed before any content',
};

export function noCandidates(group: GroupConfig, model: string | undefined): GatewayError {
  return proxyErrors.no_account_available(model === undefined
    ? `No upstream account of group "${group.name}" is enabled`
    : `No enabled upstream account of group "${group.name}" serves the model "${model}"`);
}

/**
 * Every account tried failed, or none was left to try: 502 when the upstream itself failed, 403 when each refused the
 * request and none was paused, 429 when the accounts are rate limited (retry-after: the soonest cool-down end), else 503
 * (all cooling down or needing attention).
 */
export function exhausted(group: GroupConfig, attempts: Attempt[], states: AccountState[], now: number): GatewayError {
  const n = attempts.length;
  const tried = n === 1 ? 'the only account tried' : `all ${n} accounts tried`;
  const failures = attempts.filter((a) => UPSTREAM_FAILURES.has(a.reason));
  if (failures.length) {
    const last = failures[failures.length - 1];
    return proxyErrors.upstream_failed(`The upstream request failed on ${tried} (last: ${LAST[last.reason]}${last.status ? `, HTTP ${last.status}` : ''})`);
  }
  // Refused with 401/403 everywhere while no credential was shown at fault (its check could not tell): the request's refusal.
  if (n && attempts.every((a) => a.reason === 'auth') && states.every((s) => s.coolingUntil === undefined)) {
    return proxyErrors.upstream_request_refused(`The upstream refused this request (HTTP ${attempts[n - 1].status}) on ${tried}; the credentials could not be checked`);
  }
  const free = states.some((s) => s.coolingUntil === undefined);
  // Accounts needing attention come back only after their (long) pause: the soonest other cool-down is the useful hint.
  const ends = states.filter((s) => s.coolingUntil !== undefined && s.reason !== 'auth').map((s) => s.coolingUntil! - now);
  const soonest = free || !ends.length ? undefined : Math.min(...ends);
  const headers: Record<string, string> = soonest === undefined ? {} : { 'retry-after': String(seconds(soonest)) };
  const rateLimited = attempts.some((a) => a.reason === 'rate_limited') || states.some((s) => s.reason === 'rate_limited' && s.coolingUntil !== undefined);
  if (rateLimited) {
    headers['retry-after'] ??= '1';
    return proxyErrors.all_accounts_rate_limited(
      `Every upstream account of group "${group.name}" is rate limited; retry after ${headers['retry-after']} s`, { headers });
  }
  const attention = states.length > 0 && states.every((s) => s.reason === 'auth' && s.coolingUntil !== undefined);
  const when = attention ? ': every account needs attention from the operator' : soonest === undefined ? ' right now' : `; the soonest may return in ${headers['retry-after']} s`;
  return proxyErrors.no_account_available(`No upstream account of group "${group.name}" is available${when}`, { headers });
}

/** An upstream refused the request itself (401/403 while the account's credential works): nothing to fail over to. */
export function requestRefused(status: number): GatewayError {
  return proxyErrors.upstream_request_refused(
    `The upstream refused this request (HTTP ${status}) although the account's credential is valid: something in the request is not permitted for this group's accounts`);
}

const WHY: Record<CooldownReason, string> = {
  rate_limited: 'is rate limited', overloaded: 'is overloaded', auth: 'needs attention from an operator (its credential was refused)',
  upstream_error: 'is failing', unreachable: 'cannot be reached', credential: 'could not obtain its credential (its token endpoint failed)',
};

/**
 * The account holding a pinned conversation cannot serve it: gone (409: the conversation cannot continue here) or
 * cooling down / needing attention / just failed (503, with when it may return).
 */
export function conversationUnavailable(id: string, state: AccountState | 'gone' | undefined, now: number): GatewayError {
  const what = `The upstream account that holds this conversation (${id})`;
  if (state === 'gone') {
    return proxyErrors.conversation_account_unavailable(`${what} is no longer available; start a new conversation without previous_response_id`, { status: 409 });
  }
  const until = state?.coolingUntil;
  const why = state?.reason ? WHY[state.reason] : 'is unavailable';
  if (until === undefined || until <= now) {
    return proxyErrors.conversation_account_unavailable(`${what} ${why}; retry shortly`, { headers: { 'retry-after': '1' } });
  }
  const s = seconds(until - now);
  return proxyErrors.conversation_account_unavailable(
    `${what} ${why}; it may return in ${s} s (at ${new Date(until).toISOString()})`, { headers: { 'retry-after': String(s) } });
}
