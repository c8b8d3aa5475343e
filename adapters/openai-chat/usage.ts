// Chat Completions usage both ways: the upstream's usage object → canonical usage (what the ledger bills), and canonical
// usage → the usage object a chat client reads (docs/wire-formats.md#chat-response; #usage: prompt tokens include cached ones, completion
// tokens include reasoning).
import type { Usage } from '../../core/usage.ts';
import { chatTokenUsage } from '../shared/openai-usage.ts';

/** OpenAI usage object → canonical usage (prompt tokens include cached ones, completion includes reasoning). */
export const chatUsage = chatTokenUsage;

/** Canonical usage → a chat usage object; cache writes appear (as relays report them) only when there were some. */
export function chatUsageObject(usage: Usage) {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, ...(usage.cacheWrite > 0 ? { cache_write_tokens: usage.cacheWrite } : {}) },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
}
