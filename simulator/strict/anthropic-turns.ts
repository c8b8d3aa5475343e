// What the real Anthropic Messages API refuses inside `messages`: roles, blocks, tool pairing, thinking blocks.
//
// Consecutive messages of one role are merged into one turn by the API (documented on MessageCreateParams.messages:
// "Consecutive user or assistant turns in your request will be combined into a single turn"), so pairing rules look at
// turns; errors still name the original message index. A first message from the assistant is accepted nowadays.
// A role "system" message (the beta's BetaSystemMessageParam: text and tool-change blocks, clear_at, a per-turn
// output_config.effort) is an instruction between turns: it takes no part in turns or tool pairing.
// Messages are the API's own, quoted in public issue reports (anthropics/claude-code #13460, #7929, #10627; Zoo-Code
// PR #1705; opencode #3077): pydantic-style "loc: msg" for shape errors, sentences for the conversation rules.
import type { ErrorSpec } from '../errors.ts';
import { isObject } from '../incoming.ts';
import { verify } from '../signatures.ts';
import { firstOf, type Rule, unknownKeys } from './rules.ts';

type Block = Record<string, unknown>;
export type Message = Record<string, unknown>;

export interface AnthropicSubject {
  body: Record<string, unknown> & { messages: Message[] };
  /** POST /v1/messages, or /v1/messages/count_tokens (no max_tokens, fewer fields). */
  endpoint: 'create' | 'count_tokens';
}

interface Located { block: Block; message: number; index: number }
interface Turn { role: string; first: number; blocks: Located[] }

const ROLES = ['user', 'assistant', 'system'];
const MESSAGE_FIELDS: Record<string, ReadonlySet<string>> = {
  user: new Set(['role', 'content']),
  assistant: new Set(['role', 'content']),
  system: new Set(['role', 'content', 'clear_at', 'output_config']),
};
// What a system message holds and sets (BetaSystemMessageParam of @anthropic-ai/sdk 1.12): `format` stays top-level only.
const SYSTEM_BLOCK_FIELDS: Record<string, ReadonlySet<string>> = {
  text: new Set(['type', 'text', 'cache_control', 'citations']),
  tool_addition: new Set(['type', 'tool', 'cache_control']),
  tool_removal: new Set(['type', 'tool', 'cache_control']),
};
const SYSTEM_OUTPUT_FIELDS = new Set(['effort']);
const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];
const CLEAR_AT = ['next_user_message', 'never'];
// Block types whose fields are checked (ContentBlockParam in @anthropic-ai/sdk 1.12); server-tool blocks pass unchecked.
const BLOCK_FIELDS: Record<string, ReadonlySet<string>> = {
  text: new Set(['type', 'text', 'cache_control', 'citations']),
  image: new Set(['type', 'source', 'cache_control', 'transformations']),
  document: new Set(['type', 'source', 'cache_control', 'citations', 'context', 'title']),
  search_result: new Set(['type', 'source', 'title', 'content', 'cache_control', 'citations']),
  thinking: new Set(['type', 'thinking', 'signature']),
  redacted_thinking: new Set(['type', 'data']),
  tool_use: new Set(['type', 'id', 'name', 'input', 'cache_control', 'caller', 'toolset_name']),
  tool_result: new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control', 'toolset_name']),
};
const SERVER_BLOCKS = [
  'server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result', 'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result', 'tool_search_tool_result', 'container_upload',
];
const tags = (list: string[]) => list.map((tag) => `'${tag}'`).join(', ');
const BLOCK_TAGS = tags([...Object.keys(BLOCK_FIELDS), ...SERVER_BLOCKS]);
const SYSTEM_BLOCK_TAGS = tags(Object.keys(SYSTEM_BLOCK_FIELDS));
/** Pydantic's literal error: 'a', 'b' or 'c'. */
const oneOf = (values: string[]) => `Input should be ${tags(values.slice(0, -1))} or '${values[values.length - 1]}'`;
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const THINKING_DOCS = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

const bad = (message: string): ErrorSpec => ({ status: 400, message });

export const turnRules: readonly Rule<AnthropicSubject>[] = [
  {
    refuses: 'roles other than user, assistant and system',
    check: ({ body }) => firstOf(body.messages, (message, i) => (ROLES.includes(message.role as string)
      ? undefined
      : bad(`messages.${i}.role: ${oneOf(ROLES)}`))),
  },
  {
    refuses: 'message fields its role does not have (clear_at and output_config are a system message\'s), a missing content, a system message with neither content nor output_config fields',
    check: ({ body }) => firstOf(body.messages, (message, i) => {
      const [extra] = unknownKeys(message, MESSAGE_FIELDS[message.role as string]);
      if (extra !== undefined) return bad(`messages.${i}.${extra}: Extra inputs are not permitted`);
      if (message.role !== 'system') return message.content === undefined ? bad(`messages.${i}.content: Field required`) : undefined;
      const settings = isObject(message.output_config) ? Object.values(message.output_config).filter((v) => v !== null) : [];
      return message.content === undefined && settings.length === 0
        ? bad(`messages.${i}: a system message must have \`content\` or \`output_config\` fields`)
        : undefined;
    }),
  },
  {
    refuses: 'a system message\'s clear_at or output_config outside their values (effort low to max; format stays top-level)',
    check: ({ body }) => firstOf(body.messages, (message, i) => {
      if (message.role !== 'system') return undefined;
      if (message.clear_at != null && !CLEAR_AT.includes(message.clear_at as string)) return bad(`messages.${i}.clear_at: ${oneOf(CLEAR_AT)}`);
      const config = message.output_config;
      if (config == null) return undefined;
      if (!isObject(config)) return bad(`messages.${i}.output_config: Input should be a valid dictionary or object to extract fields from`);
      const [extra] = unknownKeys(config, SYSTEM_OUTPUT_FIELDS);
      if (extra !== undefined) return bad(`messages.${i}.output_config.${extra}: Extra inputs are not permitted`);
      return config.effort != null && !EFFORTS.includes(config.effort as string) ? bad(`messages.${i}.output_config.effort: ${oneOf(EFFORTS)}`) : undefined;
    }),
  },
  {
    refuses: 'block types the API does not have (chat-style image_url included; a system message holds text and tool changes only), and block fields their type does not have',
    check: ({ body }) => firstOf(body.messages, (message, i) => firstOf(blocksOf(message), (block, j) => {
      const type = String(block.type);
      if (message.role === 'system' && !SYSTEM_BLOCK_FIELDS[type]) {
        return bad(`messages.${i}.content.${j}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${SYSTEM_BLOCK_TAGS}`);
      }
      const fields = message.role === 'system' ? SYSTEM_BLOCK_FIELDS[type] : BLOCK_FIELDS[type];
      if (!fields) {
        return SERVER_BLOCKS.includes(type) ? undefined : bad(`messages.${i}.content.${j}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${BLOCK_TAGS}`);
      }
      const [extra] = unknownKeys(block, fields);
      return extra === undefined ? undefined : bad(`messages.${i}.content.${j}.${type}.${extra}: Extra inputs are not permitted`);
    })),
  },
  {
    refuses: 'empty content anywhere but a final assistant message',
    check: ({ body }) => firstOf(body.messages, (message, i) => {
      const empty = message.content === '' || (Array.isArray(message.content) && message.content.length === 0);
      const finalAssistant = i === body.messages.length - 1 && message.role === 'assistant';
      return empty && !finalAssistant ? bad(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`) : undefined;
    }),
  },
  {
    refuses: 'tool ids outside ^[a-zA-Z0-9_-]+$',
    check: ({ body }) => firstOf(body.messages, (message, i) => firstOf(blocksOf(message), (block, j) => {
      const field = block.type === 'tool_use' ? 'id' : block.type === 'tool_result' ? 'tool_use_id' : undefined;
      return field && !TOOL_ID.test(String(block[field]))
        ? bad(`messages.${i}.content.${j}.${block.type}.${field}: String should match pattern '^[a-zA-Z0-9_-]+$'`)
        : undefined;
    })),
  },
  { refuses: 'tool_result blocks that answer no tool_use of the turn just before, tool_use left unanswered, and results not first', check: ({ body }) => toolPairing(turnsOf(body.messages)) },
  {
    refuses: 'thinking blocks whose signature this API did not mint (or whose text was changed)',
    check: ({ body }) => firstOf(body.messages, (message, i) => firstOf(blocksOf(message), (block, j) => {
      if (block.type !== 'thinking') return undefined;
      if (block.signature === undefined) return bad(`messages.${i}.content.${j}.thinking.signature: Field required`);
      return verify('anthropic', String(block.thinking), block.signature) ? undefined : bad(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
    })),
  },
  { refuses: 'with thinking on, a tool loop whose assistant turn does not start with a thinking block', check: ({ body }) => thinkingFirst(body) },
];

/** A message's blocks; string content is one text block. */
export function blocksOf(message: Message): Block[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return Array.isArray(message.content) ? message.content.map((block) => (isObject(block) ? block : { type: undefined })) : [];
}

function turnsOf(messages: Message[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, i) => {
    if (message.role === 'system') return;
    const blocks = blocksOf(message).map((block, index) => ({ block, message: i, index }));
    const last = turns[turns.length - 1];
    if (last?.role === message.role) last.blocks.push(...blocks);
    else turns.push({ role: String(message.role), first: i, blocks });
  });
  return turns;
}

const ofType = (turn: Turn, type: string) => turn.blocks.filter(({ block }) => block.type === type);

/** Each user turn's tool_result blocks answer the tool_use blocks of the assistant turn right before it, all of them, first. */
function toolPairing(turns: Turn[]): ErrorSpec | undefined {
  return firstOf(turns, (turn, t) => {
    if (turn.role !== 'user') return undefined;
    const previous = turns[t - 1];
    const uses = previous?.role === 'assistant' ? ofType(previous, 'tool_use') : [];
    const useIds = uses.map(({ block }) => block.id);
    const results = ofType(turn, 'tool_result');
    const stray = results.find(({ block }) => !useIds.includes(block.tool_use_id));
    if (stray) {
      return bad(`messages.${stray.message}.content.${stray.index}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(stray.block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
    }
    const unanswered = uses.filter(({ block }) => !results.some((result) => result.block.tool_use_id === block.id));
    if (unanswered.length > 0) {
      return bad(`messages.${unanswered[0].message}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.map(({ block }) => String(block.id)).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`);
    }
    const leading = turn.blocks.findIndex(({ block }) => block.type !== 'tool_result');
    if (uses.length > 0 && leading !== -1 && leading < uses.length) {
      return bad(`messages.${turn.first}: Did not find ${uses.length} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`);
    }
    return undefined;
  });
}

/**
 * With thinking on, the assistant's current turn (every message since the last user turn that is more than tool results)
 * must open with a thinking block when it is in a tool loop (extended-thinking docs, "Preserving thinking blocks").
 */
function thinkingFirst(body: AnthropicSubject['body']): ErrorSpec | undefined {
  const thinking = isObject(body.thinking) ? body.thinking.type : undefined;
  if (thinking !== 'enabled' && thinking !== 'adaptive') return undefined;
  const turns = turnsOf(body.messages);
  const last = turns[turns.length - 1];
  if (last?.role !== 'user' || ofType(last, 'tool_result').length === 0) return undefined;
  const humanTurn = turns.findLastIndex((turn) => turn.role === 'user' && turn.blocks.some(({ block }) => block.type !== 'tool_result'));
  const opening = turns[humanTurn + 1];
  if (opening?.role !== 'assistant' || ofType(opening, 'tool_use').length === 0) return undefined;
  const first = opening.blocks[0];
  if (first.block.type === 'thinking' || first.block.type === 'redacted_thinking') return undefined;
  return bad(`messages.${first.message}.content.${first.index}.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.block.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. ${THINKING_DOCS}`);
}
