// A client's system prompt and messages → canonical. A role "system" message inside messages (the beta's
// BetaSystemMessageParam, which Claude Code sends with its default model) is an instruction in place: its
// output_config.effort sets this answer's effort, and one cleared at the next user message is gone once that message exists.
import type { CanonMessage, ReasoningEffort, TextBlock } from '../../../core/canonical.ts';
import { cacheHint } from './cache.ts';
import { invalid, list, type Obj, obj, str, untranslatable } from './check.ts';
import { CLIENT_SIDE, decodeContent } from './decode-blocks.ts';

/** What a system message may set (BetaSystemMessageOutputConfig.effort, BetaSystemMessageParam.clear_at). */
const MESSAGE_EFFORTS: ReadonlySet<string> = new Set<ReasoningEffort>(['low', 'medium', 'high', 'xhigh', 'max']);
const CLEAR_AT: ReadonlySet<string> = new Set(['next_user_message', 'never']);
/** Fields a user or assistant message must not carry: the API takes them on system messages only. */
const SYSTEM_ONLY = ['clear_at', 'output_config'];
// Mid-conversation tool changes (the inline-tools beta): no other format can add or withdraw a tool at a point in the turns.
const TOOL_CHANGES: ReadonlySet<unknown> = new Set(['tool_addition', 'tool_removal']);

const absent = (v: unknown): v is undefined | null => v === undefined || v === null;

/** A system prompt (top-level `system`, or a system message's content): a string or text blocks. */
export function decodeSystem(system: unknown, at = 'system'): TextBlock[] {
  if (absent(system)) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return list(system, at).map((raw, i) => {
    const block = obj(raw, `${at}.${i}`);
    if (TOOL_CHANGES.has(block.type)) {
      throw untranslatable(`${at}.${i}: "${String(block.type)}" blocks (tools added or withdrawn mid-conversation) cannot be translated for this group's upstream`, `${at}.${i}.type`);
    }
    if (block.type !== 'text') throw invalid('system blocks must be text blocks', `${at}.${i}.type`);
    return { type: 'text', text: str(block.text, `${at}.${i}.text`), ...cacheHint(block) };
  });
}

/** The turns, and the effort the last system message that sets one gives this answer. */
export function decodeMessages(raw: unknown): { messages: CanonMessage[]; effort?: ReasoningEffort } {
  const all = list(raw, 'messages').map((m, i) => obj(m, `messages.${i}`));
  const lastUser = all.findLastIndex((m) => m.role === 'user');
  const messages: CanonMessage[] = [];
  let effort: ReasoningEffort | undefined;
  all.forEach((message, i) => {
    const at = `messages.${i}`;
    const role = message.role;
    if (role === 'system') {
      const system = systemMessage(message, at);
      // Cleared: the API keeps it in the array but no longer shows it (nor its effort) once a later user message exists.
      if (system.clearAt === 'next_user_message' && i < lastUser) return;
      effort = system.effort ?? effort;
      if (system.content.length > 0) messages.push({ role, content: system.content });
      return;
    }
    if (role !== 'user' && role !== 'assistant') throw invalid('must be "user", "assistant" or "system"', `${at}.role`);
    const extra = SYSTEM_ONLY.find((key) => message[key] !== undefined);
    if (extra) throw invalid('only a system message takes this field', `${at}.${extra}`);
    messages.push({ role, content: decodeContent(message.content, `${at}.content`, CLIENT_SIDE) });
  });
  return { messages, ...(effort ? { effort } : {}) };
}

function systemMessage(message: Obj, at: string): { content: TextBlock[]; clearAt?: string; effort?: ReasoningEffort } {
  const clearAt = message.clear_at;
  if (!absent(clearAt) && !CLEAR_AT.has(clearAt as string)) throw invalid('must be "next_user_message" or "never"', `${at}.clear_at`);
  const config = absent(message.output_config) ? {} : obj(message.output_config, `${at}.output_config`);
  const effort = config.effort;
  if (!absent(effort) && !MESSAGE_EFFORTS.has(effort as string)) throw invalid('must be "low", "medium", "high", "xhigh" or "max"', `${at}.output_config.effort`);
  if (absent(message.content) && absent(effort)) throw invalid('a system message needs content or an output_config setting', at);
  return {
    content: decodeSystem(message.content, `${at}.content`),
    ...(typeof clearAt === 'string' ? { clearAt } : {}),
    ...(absent(effort) ? {} : { effort: effort as ReasoningEffort }),
  };
}
