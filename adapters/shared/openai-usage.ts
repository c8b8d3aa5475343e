// OpenAI token usage objects (Responses, Images) → canonical usage: input includes cached tokens, output includes reasoning (docs/wire-formats.md#usage).
import { num, type Usage } from '../../core/usage.ts';

export function openaiTokenUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const usage = u as Record<string, any>;
  return {
    input: num(usage.input_tokens),
    cacheRead: num(usage.input_tokens_details?.cached_tokens),
    cacheWrite: num(usage.input_tokens_details?.cache_write_tokens),
    output: num(usage.output_tokens),
    reasoning: num(usage.output_tokens_details?.reasoning_tokens),
  };
}
