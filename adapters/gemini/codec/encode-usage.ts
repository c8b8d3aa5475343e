// Canonical usage → Gemini usageMetadata: promptTokenCount includes cached content; candidatesTokenCount excludes thoughts.
import type { Usage } from '../../../core/usage.ts';

export function encodeUsage(usage: Usage): Record<string, number> {
  const thoughts = usage.reasoning;
  return {
    promptTokenCount: usage.input,
    ...(usage.cacheRead > 0 ? { cachedContentTokenCount: usage.cacheRead } : {}),
    candidatesTokenCount: Math.max(0, usage.output - thoughts),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: usage.input + usage.output,
  };
}
