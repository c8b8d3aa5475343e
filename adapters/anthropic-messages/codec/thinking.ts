// Reasoning settings both ways: a client's thinking / output_config.effort in, an upstream's thinking budget out
// (docs/translation.md "Reasoning": at least 1024, below max_tokens, off when a tool is forced).
import type { ReasoningConfig, ReasoningEffort } from '../../../core/canonical.ts';
import { invalid, isObj, type Obj, obj, optInt } from './check.ts';
import { BUDGET_BY_EFFORT, MIN_BUDGET } from './tables.ts';

const EFFORTS: ReadonlySet<string> = new Set<ReasoningEffort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);

/**
 * thinking {enabled, budget_tokens | adaptive | disabled, display?} and output_config.effort → canonical. `turnEffort`
 * (a system message's output_config.effort) is this answer's own and wins over the request's.
 */
export function decodeReasoning(body: Obj, turnEffort?: ReasoningEffort): ReasoningConfig | undefined {
  const effort = turnEffort ?? (isObj(body.output_config) && typeof body.output_config.effort === 'string' && EFFORTS.has(body.output_config.effort)
    ? body.output_config.effort as ReasoningEffort
    : undefined);
  if (body.thinking === undefined || body.thinking === null) return effort ? { effort } : undefined;
  const thinking = obj(body.thinking, 'thinking');
  const withEffort = effort ? { effort } : {};
  switch (thinking.type) {
    case 'disabled':
      return { enabled: false, ...withEffort };
    case 'enabled':
    case 'adaptive': {
      const budget = thinking.type === 'enabled' ? optInt(thinking.budget_tokens, 'thinking.budget_tokens') : undefined;
      // Claude 4 models show summarised thinking unless the client asks for it omitted.
      return { enabled: true, ...withEffort, ...(budget === undefined ? {} : { budgetTokens: budget }), show: thinking.display !== 'omitted' };
    }
    default:
      throw invalid(`unknown thinking type "${String(thinking.type)}"`, 'thinking.type');
  }
}

/** The thinking parameter for an upstream, or undefined for none (asked for none, no room below max_tokens, a forced tool). */
export function encodeThinking(reasoning: ReasoningConfig | undefined, maxTokens: number, toolForced: boolean): Obj | undefined {
  if (!reasoning || reasoning.enabled === false || reasoning.effort === 'none') return undefined;
  if (reasoning.enabled !== true && reasoning.effort === undefined && reasoning.budgetTokens === undefined) return undefined;
  // Anthropic refuses thinking with a forced tool, and a budget that leaves nothing for the answer.
  if (toolForced || maxTokens <= MIN_BUDGET) return undefined;
  const asked = reasoning.budgetTokens !== undefined && reasoning.budgetTokens > 0
    ? reasoning.budgetTokens
    : BUDGET_BY_EFFORT[reasoning.effort ?? 'medium'];
  return { type: 'enabled', budget_tokens: Math.min(Math.max(asked, MIN_BUDGET), maxTokens - 1) };
}
