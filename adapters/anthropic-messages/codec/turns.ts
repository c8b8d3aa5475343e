// A canonical conversation as Anthropic turns: user and assistant alternating, a mid-conversation system message as user
// text, every tool result of a turn first in its user message (docs/translation.md "Turns", "System prompt").
import type { CanonMessage } from '../../../core/canonical.ts';
import type { Obj } from './check.ts';
import { cacheControl } from './cache.ts';
import { upstreamBlock } from './encode-blocks.ts';

export interface Turn { role: 'user' | 'assistant'; content: Obj[] }

/** The turns, and system text found before the first turn (it belongs to the system prompt). */
export function encodeTurns(messages: CanonMessage[]): { turns: Turn[]; system: Obj[] } {
  const turns: Turn[] = [];
  const system: Obj[] = [];
  messages.forEach((message, i) => {
    let role: Turn['role'];
    let blocks: Obj[];
    if (message.role === 'system') {
      const texts = message.content.flatMap((b) => (b.type === 'text' && b.text !== '' ? [b] : []));
      if (turns.length === 0) {
        system.push(...texts.map((b) => ({ type: 'text', text: b.text, ...cacheControl(b.cache) })));
        return;
      }
      if (texts.length === 0) return;
      role = 'user';
      blocks = [{ type: 'text', text: `[system] ${texts.map((b) => b.text).join('\n\n')}` }];
    } else {
      role = message.role;
      blocks = message.content.map((b, j) => upstreamBlock(b, `messages.${i}.content.${j}`)).filter((b) => b !== undefined);
    }
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  });
  for (const turn of turns) if (turn.role === 'user') turn.content = resultsFirst(turn.content);
  trimFinalAssistant(turns);
  return { turns, system };
}

const isResult = (block: Obj) => block.type === 'tool_result';

function resultsFirst(blocks: Obj[]): Obj[] {
  return [...blocks.filter(isResult), ...blocks.filter((b) => !isResult(b))];
}

/** The API refuses a final assistant message (a prefill) that ends in whitespace. */
function trimFinalAssistant(turns: Turn[]): void {
  const last = turns[turns.length - 1];
  const block = last?.role === 'assistant' ? last.content[last.content.length - 1] : undefined;
  if (block?.type !== 'text') return;
  const text = String(block.text).trimEnd();
  if (text === '') last.content.pop();
  else block.text = text;
  if (last.content.length === 0) turns.pop();
}

/**
 * Whether thinking can be on for these turns. The API refuses it with an assistant prefill (a final assistant turn), and
 * requires every assistant turn of the current tool loop (since the last turn the user wrote) to start with its thinking
 * block: a history from another format has none to give, so thinking is turned off for this request instead.
 */
export function thinkingAllowed(turns: Turn[]): boolean {
  const last = turns[turns.length - 1];
  if (last?.role === 'assistant') return false;
  if (!last?.content.some(isResult)) return true;
  const human = turns.findLastIndex((turn) => turn.role === 'user' && turn.content.some((b) => !isResult(b)));
  return turns.slice(human + 1).every((turn) => turn.role === 'user'
    || !turn.content.some((b) => b.type === 'tool_use')
    || turn.content[0].type === 'thinking' || turn.content[0].type === 'redacted_thinking');
}
