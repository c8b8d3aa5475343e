// Canonical usage → Anthropic's usage object: input_tokens counts only uncached input (docs/wire-formats.md#anthropic-response; #usage).
import type { Usage } from '../../../core/usage.ts';
import type { Obj } from './check.ts';

/**
 * `whole` adds the TTL split a Message and message_start carry; message_delta has only the counters. Thinking tokens go
 * in output_tokens_details (the newer field adapters/anthropic-messages/usage.ts reads) when known.
 */
export function wireUsage(usage: Partial<Usage>, whole: boolean): Obj {
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const cacheWrite1h = Math.min(cacheWrite, usage.cacheWrite1h ?? 0);
  return {
    input_tokens: Math.max(0, (usage.input ?? 0) - cacheRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    ...(whole ? { cache_creation: { ephemeral_5m_input_tokens: cacheWrite - cacheWrite1h, ephemeral_1h_input_tokens: cacheWrite1h } } : {}),
    output_tokens: usage.output ?? 0,
    ...(usage.reasoning ? { output_tokens_details: { thinking_tokens: usage.reasoning } } : {}),
  };
}
