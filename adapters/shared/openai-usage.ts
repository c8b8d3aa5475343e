// OpenAI token usage objects → canonical usage: input includes cached tokens, output includes reasoning
// (docs/wire-formats.md#usage). Chat completions names the fields prompt/completion, Responses and Images input/output.
import { num, type Usage } from '../../core/usage.ts';

function usageReader(input: string, output: string): (u: unknown) => Usage | undefined {
  return (u) => {
    if (!u || typeof u !== 'object') return undefined;
    const usage = u as Record<string, any>;
    return {
      input: num(usage[`${input}_tokens`]),
      cacheRead: num(usage[`${input}_tokens_details`]?.cached_tokens),
      cacheWrite: num(usage[`${input}_tokens_details`]?.cache_write_tokens),
      output: num(usage[`${output}_tokens`]),
      reasoning: num(usage[`${output}_tokens_details`]?.reasoning_tokens),
    };
  };
}

/** Responses and Images: input_tokens, output_tokens and their _details. */
export const openaiTokenUsage = usageReader('input', 'output');
/** Chat completions: prompt_tokens, completion_tokens and their _details. */
export const chatTokenUsage = usageReader('prompt', 'completion');
