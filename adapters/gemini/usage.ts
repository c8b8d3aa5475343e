// Gemini usageMetadata → canonical: prompt includes cached content; output is candidates plus thoughts (docs/wire-formats.md#gemini-response; #usage).
import { num, type Usage } from '../../core/usage.ts';

export function geminiUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const usage = u as Record<string, any>;
  const thoughts = num(usage.thoughtsTokenCount);
  return {
    input: num(usage.promptTokenCount) + num(usage.toolUsePromptTokenCount),
    cacheRead: num(usage.cachedContentTokenCount),
    // Explicit caches are billed separately by Google; a response never reports a cache write.
    cacheWrite: 0,
    output: num(usage.candidatesTokenCount) + thoughts,
    reasoning: thoughts,
  };
}

/** A body is one response, or (streamGenerateContent without alt=sse) an array of chunks whose last usageMetadata counts. */
export function usageOfBody(json: unknown): Usage | undefined {
  const chunks = Array.isArray(json) ? json : [json];
  for (let i = chunks.length - 1; i >= 0; i--) {
    const usage = geminiUsage((chunks[i] as Record<string, unknown> | null)?.usageMetadata);
    if (usage) return usage;
  }
  return undefined;
}
