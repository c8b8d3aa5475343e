// Decides what the simulated model answers, independent of wire format, so every dialect replies alike.
import { countTokens, firstTokens } from './tokens.ts';

// Short replies keep stream tests and benchmarks fast while still spanning several chunks.
export const MAX_REPLY_WORDS = 12;

export type Reply =
  | { kind: 'text'; text: string; finish: 'stop' | 'length'; tokens: number }
  | { kind: 'tool'; name: string; arguments: string; tokens: number };

export interface ReplyInput {
  /** Text of the last user turn (text parts joined). */
  lastUserText: string;
  /** Content of the last message when it is a tool result: the model then reports it. */
  toolResult?: string;
  /** Set when the request asks for (or allows) a tool call and names the tool to call. */
  toolName?: string;
  /** Output cap from the request, if any. */
  maxTokens?: number;
}

export function planReply(input: ReplyInput): Reply {
  if (input.toolResult !== undefined) return textReply('Tool result:', input.toolResult, input.maxTokens);
  if (input.toolName !== undefined) {
    const args = JSON.stringify({ input: input.lastUserText });
    // Arguments are never cut by the output cap: they must stay valid JSON for clients to parse.
    return { kind: 'tool', name: input.toolName, arguments: args, tokens: countTokens(args) };
  }
  return textReply('Echo:', input.lastUserText, input.maxTokens);
}

function textReply(prefix: string, text: string, maxTokens: number | undefined): Reply {
  // Splitting on whitespace normalises newlines and runs of spaces, which keeps expectations easy to write.
  const words = [prefix, ...text.split(/\s+/).filter(Boolean)].slice(0, MAX_REPLY_WORDS);
  const full = words.join(' ');
  const tokens = countTokens(full);
  if (maxTokens !== undefined && maxTokens < tokens) {
    return { kind: 'text', text: firstTokens(full, maxTokens), finish: 'length', tokens: maxTokens };
  }
  return { kind: 'text', text: full, finish: 'stop', tokens };
}
