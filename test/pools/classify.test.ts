// The one error classifier: which failures switch accounts, how long each kind cools the account down, and every way an
// upstream announces when its rate limit resets.
import t from 'tap';
import { classify, durationMs, resetMs, type CooldownOptions } from '../../plugins/proxy/classify.ts';

const O: CooldownOptions = { rate_limit_fallback_ms: 10_000, overload_ms: 60_000, auth_pause_ms: 600_000, error_ms: 0, unreachable_ms: 10_000 };
const NOW = Date.parse('2026-03-01T12:00:00Z');
const status = (s: number, headers: Record<string, string> = {}) => classify({ kind: 'status', status: s, headers }, O, NOW);

t.test('the table: failover, reason and cool-down per status and cause', async (t) => {
  const cases: [string, ReturnType<typeof classify>, boolean, string, number, string][] = [
    ['401', status(401), true, 'auth', 600_000, 'auth'],
    ['403', status(403), true, 'auth', 600_000, 'auth'],
    ['429 without a reset', status(429), true, 'rate_limited', 10_000, 'rate_limited'],
    ['429 retry-after 3', status(429, { 'retry-after': '3' }), true, 'rate_limited', 3000, 'rate_limited'],
    ['529', status(529), true, 'overloaded', 60_000, 'overloaded'],
    ['500', status(500), true, 'upstream_error', 0, 'upstream_error'],
    ['502', status(502), true, 'upstream_error', 0, 'upstream_error'],
    ['503', status(503), true, 'upstream_error', 0, 'upstream_error'],
    ['504', status(504), true, 'upstream_error', 0, 'upstream_error'],
    ['connect', classify({ kind: 'connect' }, O), true, 'unreachable', 10_000, 'unreachable'],
    ['timeout', classify({ kind: 'timeout' }, O), true, 'timeout', 10_000, 'unreachable'],
    ['stream error', classify({ kind: 'stream_error', message: 'simulated mid-stream failure' }, O), true, 'stream_error', 0, 'upstream_error'],
    ['stream error "model at capacity"', classify({ kind: 'stream_error', message: 'The model is at capacity' }, O), true, 'overloaded', 60_000, 'overloaded'],
    ['stream error "Overloaded"', classify({ kind: 'stream_error', message: 'Overloaded' }, O), true, 'overloaded', 60_000, 'overloaded'],
    ['stream error "Rate limit reached"', classify({ kind: 'stream_error', message: 'Rate limit reached for requests' }, O), true, 'rate_limited', 10_000, 'rate_limited'],
  ];
  for (const [label, v, failover, reason, ms, cooldown] of cases) {
    t.same({ failover: v.failover, reason: v.reason, cooldownMs: v.cooldownMs, cooldownReason: v.cooldownReason }, { failover, reason, cooldownMs: ms, cooldownReason: cooldown }, label);
  }
  for (const s of [400, 404, 409, 413, 422]) {
    t.same([status(s).failover, status(s).reason, status(s).cooldownMs], [false, 'client_error', 0], `${s} passes through`);
  }
  t.same([status(200).failover, status(200).reason], [false, 'ok']);
  t.equal(classify({ kind: 'status', status: 500, headers: {} }, { ...O, error_ms: 2500 }).cooldownMs, 2500, 'error_ms applies to 5xx');
});

t.test('when a rate limit resets: every header an upstream may send', async (t) => {
  t.equal(resetMs({ 'retry-after-ms': '1500' }, NOW), 1500, 'retry-after-ms');
  t.equal(resetMs({ 'retry-after-ms': '250', 'retry-after': '9' }, NOW), 250, 'retry-after-ms wins over retry-after');
  t.equal(resetMs({ 'retry-after': '20' }, NOW), 20_000, 'retry-after in seconds');
  t.equal(resetMs({ 'retry-after': '0.5' }, NOW), 500, 'fractional seconds');
  t.equal(resetMs({ 'retry-after': 'Sun, 01 Mar 2026 12:00:30 GMT' }, NOW), 30_000, 'retry-after as an HTTP date');
  t.equal(resetMs({ 'retry-after': 'Sun, 01 Mar 2026 11:59:00 GMT' }, NOW), 0, 'a date in the past: now');
  t.equal(resetMs({ 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-tokens': '6m0s', 'x-ratelimit-remaining-tokens': '100' }, NOW), 1000,
    'OpenAI: the window that is exhausted (requests), not the later tokens reset');
  t.equal(resetMs({ 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-remaining-requests': '5', 'x-ratelimit-reset-tokens': '6m0s', 'x-ratelimit-remaining-tokens': '0' }, NOW), 360_000, 'OpenAI: the tokens window');
  t.equal(resetMs({ 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-reset-tokens': '1m30.5s' }, NOW), 90_500, 'no remaining counts: the latest reset');
  t.equal(resetMs({ 'anthropic-ratelimit-requests-reset': '2026-03-01T12:00:05Z', 'anthropic-ratelimit-requests-remaining': '0',
    'anthropic-ratelimit-tokens-reset': '2026-03-01T12:01:00Z', 'anthropic-ratelimit-tokens-remaining': '1000' }, NOW), 5000, 'Anthropic RFC 3339, the exhausted window');
  t.equal(resetMs({ 'anthropic-ratelimit-output-tokens-reset': '2026-03-01T12:00:42Z', 'anthropic-ratelimit-output-tokens-remaining': '0' }, NOW), 42_000, 'Anthropic output tokens');
  t.equal(resetMs({ 'anthropic-ratelimit-unified-reset': String(NOW / 1000 + 3600) }, NOW), 3_600_000, 'Anthropic unified reset in epoch seconds');
  t.equal(resetMs({ 'retry-after': String(10 * 86_400) }, NOW), 86_400_000, 'capped at a day');
  t.equal(resetMs({}, NOW), undefined, 'nothing announced');
  t.equal(resetMs({ 'retry-after': 'soon', 'x-ratelimit-reset-requests': 'later' }, NOW), undefined, 'nothing usable');
  t.equal(status(429, { 'x-ratelimit-reset-tokens': '20ms' }).cooldownMs, 20, 'a 429 cools down until the announced reset');
});

t.test('durations as OpenAI writes them', async (t) => {
  t.same(['1s', '6m0s', '1m30.5s', '20ms', '2h', '1h2m3s', '7'].map(durationMs), [1000, 360_000, 90_500, 20, 7_200_000, 3_723_000, 7000]);
  t.same(['', 'abc', '5x', 's'].map(durationMs), [undefined, undefined, undefined, undefined]);
});
