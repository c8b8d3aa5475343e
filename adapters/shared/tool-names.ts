// Tool names a target format cannot take (too long, or characters it refuses) are rewritten deterministically, and
// restored from the request's own tool list when the answer names them: no state is kept between the two.
import { createHash } from 'node:crypto';
import type { CanonRequest } from '../../core/canonical.ts';

/** What a format allows in a tool name. */
export interface NameRule { maxLength: number; invalid: RegExp }

/** OpenAI (chat, Responses) and Anthropic: letters, digits, _ and -, at most 64. */
export const OPENAI_NAMES: NameRule = { maxLength: 64, invalid: /[^a-zA-Z0-9_-]/g };
export const ANTHROPIC_NAMES: NameRule = { maxLength: 64, invalid: /[^a-zA-Z0-9_-]/g };
/** Gemini: letters, digits, _ . : and -, at most 64 (and not starting with a digit). */
export const GEMINI_NAMES: NameRule = { maxLength: 64, invalid: /[^a-zA-Z0-9_.:-]/g };

/** The name as the target may have it: unchanged when it already fits, else cleaned and, if still too long, cut with a hash. */
export function fitName(name: string, rule: NameRule): string {
  let fitted = name.replace(rule.invalid, '_');
  if (/^[0-9]/.test(fitted)) fitted = `_${fitted}`;
  if (fitted === name && fitted.length <= rule.maxLength && fitted.length > 0) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  if (fitted.length > rule.maxLength || fitted !== name) fitted = `${fitted.slice(0, rule.maxLength - 9)}_${hash}`;
  return fitted;
}

/** The client's own name for a name the target used: looked up among the request's tools (unknown names stay as they are). */
export function restoreName(name: string, request: CanonRequest, rule: NameRule): string {
  for (const tool of request.tools) if (fitName(tool.name, rule) === name) return tool.name;
  return name;
}
