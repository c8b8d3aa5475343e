// Anthropic usage → canonical: input_tokens counts only uncached input, so cache reads and writes are added back (docs/wire-formats.md#anthropic-response; #usage).
import { num, type Usage } from '../../core/usage.ts';

export function anthropicUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const usage = u as Record<string, any>;
  const cacheRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens);
  // The split of cache writes by TTL: 1-hour writes are billed higher than 5-minute ones.
  const cacheWrite1h = Math.min(cacheWrite, num(usage.cache_creation?.ephemeral_1h_input_tokens));
  return {
    input: num(usage.input_tokens) + cacheWrite + cacheRead,
    cacheRead,
    cacheWrite,
    ...(cacheWrite1h > 0 ? { cacheWrite1h } : {}),
    output: num(usage.output_tokens),
    // Newer responses report thinking tokens; older ones leave them inside output_tokens only.
    reasoning: num(usage.output_tokens_details?.thinking_tokens),
  };
}

/** message_delta usage is cumulative: each non-null field replaces the snapshot's, never adds to it (as the SDK does). */
export function overwriteUsage(snapshot: Record<string, unknown>, delta: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(delta)) {
    if (value !== null && value !== undefined) snapshot[field] = value;
  }
}
