// Decides what the simulated model answers, independent of wire format, so every dialect replies alike.
import { countTokens, firstTokens } from './tokens.ts';

// Short replies keep stream tests and benchmarks fast while still spanning several chunks.
export const MAX_REPLY_WORDS = 12;
// Reasoning stays short too: it only has to exist, be counted and be signed.
const MAX_REASONING_WORDS = 8;

export interface ToolCall {
  name: string;
  /** JSON text of the arguments object. */
  arguments: string;
}

export interface Reasoning {
  text: string;
  tokens: number;
}

/** `tokens` counts the answer only; reasoning tokens are in `reasoning.tokens` (see outputTokens). */
export type Reply =
  | { kind: 'text'; text: string; finish: 'stop' | 'length'; tokens: number; reasoning?: Reasoning }
  | { kind: 'tool'; calls: ToolCall[]; tokens: number; reasoning?: Reasoning };

export interface ReplyInput {
  /** Text of the last user turn (text parts joined). */
  lastUserText: string;
  /** Content of the last message when it is a tool result: the model then reports it. */
  toolResult?: string;
  /**
   * The tools the model may call, in declaration order (a tool choice naming one leaves just that one);
   * empty or absent for a text reply.
   */
  toolNames?: string[];
  /** Whether one reply may hold several calls (chat/Responses parallel_tool_calls, Anthropic disable_parallel_tool_use). */
  parallel?: boolean;
  /** Output cap from the request, if any; it covers reasoning and answer together. */
  maxTokens?: number;
  /** The request asked for reasoning (thinking, reasoning effort, includeThoughts). */
  reasoning?: boolean;
}

/**
 * A tool result is reported back; otherwise, when tools may be called, the model calls every declared tool the user's
 * text names (several only when parallel calls are allowed), or the first declared tool when it names none.
 */
export function planReply(input: ReplyInput): Reply {
  const reasoning = input.reasoning ? reasoningOf(input) : undefined;
  const cap = input.maxTokens === undefined ? undefined : Math.max(1, input.maxTokens - (reasoning?.tokens ?? 0));
  if (input.toolResult !== undefined) return withReasoning(textReply('Tool result:', input.toolResult, cap), reasoning);
  const names = input.toolNames ?? [];
  if (names.length > 0) {
    const named = names.filter((name) => mentions(input.lastUserText, name));
    const chosen = named.length > 0 ? named : [names[0]];
    const args = JSON.stringify({ input: input.lastUserText });
    // Arguments are never cut by the output cap: they must stay valid JSON for clients to parse.
    const calls = (input.parallel === false ? chosen.slice(0, 1) : chosen).map((name) => ({ name, arguments: args }));
    return withReasoning({ kind: 'tool', calls, tokens: calls.reduce((n, call) => n + countTokens(call.arguments), 0) }, reasoning);
  }
  return withReasoning(textReply('Echo:', input.lastUserText, cap), reasoning);
}

/** Everything the model produced: the answer and its reasoning, as OpenAI and Anthropic bill output. */
export function outputTokens(reply: Reply): number {
  return reply.tokens + (reply.reasoning?.tokens ?? 0);
}

function mentions(text: string, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_])${name.replace(/[^A-Za-z0-9_]/g, '\\$&')}($|[^A-Za-z0-9_])`).test(text);
}

function reasoningOf(input: ReplyInput): Reasoning {
  const about = input.toolResult !== undefined ? ['The', 'tool', 'returned', input.toolResult] : ['The', 'user', 'asks', input.lastUserText];
  const text = about.join(' ').split(/\s+/).filter(Boolean).slice(0, MAX_REASONING_WORDS).join(' ');
  return { text, tokens: countTokens(text) };
}

function withReasoning(reply: Reply, reasoning: Reasoning | undefined): Reply {
  return reasoning ? { ...reply, reasoning } : reply;
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

/** The id of a reply's i-th call: the first keeps the plain `<prefix>_sim_<seq>` form, later ones add their index. */
export function callId(prefix: string, seq: number, index: number): string {
  return index === 0 ? `${prefix}_sim_${seq}` : `${prefix}_sim_${seq}_${index}`;
}
