// Stage `proxy`: serves the request from the group's account pool (schedule, fail over, stick, pin) and relays the answer as it arrives.
import type { Plugin } from '../../core/types.ts';
import { Pool, poolParts, type PoolOptions } from './pool.ts';
import { SESSION_DEFAULTS } from './session.ts';

const int = (description: string, value: number, minimum = 0) => ({ type: 'integer', minimum, default: value, description });
const names = (description: string, value: string[]) => ({ type: 'array', items: { type: 'string', minLength: 1 }, default: value, description });

export const proxy: Plugin<PoolOptions> = {
  name: 'proxy',
  description: 'Sends the request to an upstream account of the group (priority, load, stickiness, response pins; failover before the first byte, cool-downs) and relays the answer.',
  // The model, when a stage before it named one (model-allowlist); a bodiless read (GET a stored response) has none.
  requires: ['group'],
  provides: ['account', 'usage'],
  // A limited key's admission goes to the store with this stage's first account decision: one round trip.
  takes: ['admission'],
  schema: {
    type: 'object', additionalProperties: false,
    properties: {
      header_timeout_ms: int('Longest wait for an upstream\'s response headers; past it the attempt fails (and moves to the next account).', 300_000, 1),
      connect_timeout_ms: int('Longest wait for the upstream TCP/TLS connection.', 10_000, 1),
      keepalive_ms: int('Send the format\'s keepalive frame when a stream is silent this long, also while it waits for an account (0 = never).', 10_000),
      max_sockets: int('Connections to one upstream origin at once, beyond which requests wait for one (0 = no limit: an account\'s declared concurrency bounds them; long streams each hold one).', 0),
      usage: { type: 'boolean', default: true, description: 'Read usage from answers; false where an answer repeats usage already counted (reading a stored response).' },
      max_switches: int('Accounts a request may move to after a failure before the first byte (401, 403, 429, 529, 5xx, connect failure, header timeout, an error in a 200 stream before its content).', 3),
      usage_drain_ms: int('A client that leaves a stream before the upstream reported its prompt\'s tokens (OpenAI Chat and Responses report usage only at the end): the stream is read on, unrelayed, for at most this long, holding the key\'s and the account\'s slots, so its real usage is billed (0 = hang up at once; metering then estimates the prompt).', 30_000),
      usage_drain_bytes: int('Most bytes read on such a stream after the client left; past them it is cut and metering estimates.', 4 * 1024 * 1024),
      first_content_ms: int('A 200 stream\'s opening frames are held until its first content for at most this long, so an error before any content can still move to another account (0 = relay at once).', 10_000),
      lease_ms: int('An account slot expires this long after its last heartbeat (so a crashed process frees it).', 60_000, 1000),
      heartbeat_ms: int('How often running requests renew their account slots.', 20_000, 100),
      queue_timeout_ms: int('How long a request waits for a free account slot when every account is busy, before a 429 ACCOUNTS_BUSY_TIMEOUT.', 30_000),
      queue_size: int('Requests of one process that may wait per group; beyond it a 429 ACCOUNTS_BUSY_QUEUE_FULL.', 100),
      rate_limit_fallback_ms: int('Cool-down after an upstream 429 that announced no reset (retry-after, x-ratelimit-reset-*, anthropic-ratelimit-*-reset).', 10_000),
      overload_ms: int('Cool-down after an upstream 529 (overloaded).', 60_000),
      auth_pause_ms: int('Pause of an account refused with 401/403 (it needs attention: logged and counted).', 600_000),
      error_ms: int('Cool-down after an upstream 5xx or a stream error before content (0 = none, just fail over).', 0),
      unreachable_ms: int('Cool-down after a connect failure or a header timeout.', 10_000),
      sticky_ttl_ms: int('How long a session stays bound to the account that last served it (renewed by every success).', 3_600_000),
      pin_ttl_ms: int('How long a stored response id stays pinned to the account that created it.', 86_400_000),
      session_headers: names('Request headers naming a session, first present wins.', SESSION_DEFAULTS.session_headers),
      session_fields: names('Body fields (dotted paths) naming a session, tried after the headers.', SESSION_DEFAULTS.session_fields),
      media_max_bytes: int('Translated requests to an upstream that takes media only inline (Gemini): largest image or file fetched from a client\'s URL.', 20 * 1024 * 1024, 1),
      media_max_total_bytes: int('All the images and files one such request fetches, together; past it the request is refused (0 = the server\'s body_limit).', 0),
      media_timeout_ms: int('Longest fetch of one such image or file.', 10_000, 1),
      media_allow_private: names('host:port origins whose media may be fetched although their address is not public (an operator\'s own media server). Every other loopback, private or link-local address is refused.', []),
      signature_ttl_ms: int('Translated requests to an upstream that signs its tool calls (Gemini 3): how long a call\'s signature is kept for a client that cannot give it back (chat completions; Responses without reasoning.encrypted_content). Past it the call goes with Google\'s placeholder signature.', 86_400_000, 1000),
      session_prefix: names('Body fields (dotted paths; a number indexes a list) whose values, hashed together, stand for the session when nothing names one.', SESSION_DEFAULTS.session_prefix),
    },
  },
  create(options, env) {
    const pool = new Pool(options, poolParts(options, env));
    return (ctx) => pool.serve(ctx);
  },
};
