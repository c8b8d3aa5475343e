// What the real Chat Completions API refuses, one row per rule, with OpenAI's own words, param and code.
//
// Sources: field and role lists from openai-node 7.57 (ChatCompletionCreateParamsBase, ChatCompletion*MessageParam);
// messages as the API answers them, quoted in public issue reports (e.g. "Unrecognized request argument supplied: top_k",
// "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'." — the
// API's own spelling —, "An assistant message with 'tool_calls' must be followed by tool messages responding to each
// 'tool_call_id'. The following tool_call_ids did not have response messages: …", "Additional properties are not allowed
// ('…' was unexpected) - 'messages.1'", "Invalid value: 'image'. Supported values are: 'text' and 'image_url'.").
import type { ErrorSpec } from '../errors.ts';
import { isObject } from '../incoming.ts';
import { firstOf, firstRefusal, quotedList, type Rule, unknownKeys } from './rules.ts';

type Message = Record<string, unknown>;
export type ChatBody = Record<string, unknown> & { messages: Message[] };

const FIELDS = new Set([
  'messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'max_completion_tokens',
  'max_tokens', 'metadata', 'modalities', 'moderation', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key',
  'prompt_cache_options', 'prompt_cache_retention', 'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier',
  'stop', 'store', 'stream', 'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity',
  'web_search_options',
]);

const ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

/** The fields a message of each role may carry; an assistant message may be a reply passed back as is (annotations too). */
const MESSAGE_FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'function_call', 'refusal', 'audio', 'annotations']),
  tool: new Set(['role', 'content', 'tool_call_id']),
  function: new Set(['role', 'content', 'name']),
};

/** The content part types a message of each role may carry. */
const PART_TYPES: Record<string, readonly string[]> = {
  system: ['text'],
  developer: ['text'],
  user: ['text', 'image_url', 'input_audio', 'file'],
  assistant: ['text', 'refusal'],
  tool: ['text'],
  function: ['text'],
};

const bad = (message: string, param: string | null = null, code: string | null = null): ErrorSpec => ({ status: 400, message, param, code });

export const chatRules: readonly Rule<Record<string, unknown>>[] = [
  {
    refuses: 'top-level fields the API does not have',
    check: (body) => {
      const extra = unknownKeys(body, FIELDS);
      if (extra.length === 0) return undefined;
      return bad(extra.length === 1 ? `Unrecognized request argument supplied: ${extra[0]}` : `Unrecognized request arguments supplied: ${extra.join(', ')}`);
    },
  },
  {
    refuses: 'a missing model',
    check: (body) => (typeof body.model === 'string' && body.model !== '' ? undefined : bad('you must provide a model parameter', 'model')),
  },
  {
    refuses: 'missing messages',
    check: (body) => (body.messages === undefined ? bad("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter') : undefined),
  },
  {
    refuses: 'messages that are not a non-empty list of objects',
    check: ({ messages }) => (Array.isArray(messages) && messages.length > 0 && messages.every(isObject)
      ? undefined
      : bad("Invalid 'messages': expected a non-empty array of message objects.", 'messages', 'invalid_type')),
  },
  {
    refuses: 'an output cap below 1',
    check: (body) => firstOf(['max_completion_tokens', 'max_tokens'], (name) => {
      const cap = body[name];
      return cap === undefined || cap === null || (Number.isInteger(cap) && (cap as number) >= 1)
        ? undefined
        : bad(`Invalid '${name}': expected an integer of at least 1.`, name, 'invalid_value');
    }),
  },
  {
    refuses: 'stream_options without stream',
    check: (body) => (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true
      ? bad("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value')
      : undefined),
  },
  {
    refuses: 'roles the format does not have',
    check: (body) => firstOf(messagesOf(body), (message, i) => (ROLES.includes(message.role as string)
      ? undefined
      : bad(`Invalid value: '${String(message.role)}'. Supported values are: ${quotedList(ROLES)}.`, `messages[${i}].role`, 'invalid_value'))),
  },
  {
    refuses: 'message fields its role does not have',
    check: (body) => firstOf(messagesOf(body), (message, i) => {
      const extra = unknownKeys(message, MESSAGE_FIELDS[message.role as string]);
      return extra.length === 0 ? undefined : bad(`Additional properties are not allowed ('${extra[0]}' was unexpected) - 'messages.${i}'`);
    }),
  },
  {
    refuses: 'content part types the role does not take',
    check: (body) => firstOf(messagesOf(body), (message, i) => {
      if (!Array.isArray(message.content)) return undefined;
      const allowed = PART_TYPES[message.role as string];
      return firstOf(message.content, (part, j) => {
        const type = isObject(part) ? part.type : undefined;
        return allowed.includes(type as string)
          ? undefined
          : bad(`Invalid value: '${String(type)}'. Supported values are: ${quotedList(allowed)}.`, `messages[${i}].content[${j}].type`, 'invalid_value');
      });
    }),
  },
  { refuses: 'tool messages that answer no call of the assistant message before them, and calls left unanswered', check: (body) => toolPairing(messagesOf(body)) },
];

export function refuseChat(body: Record<string, unknown>): ErrorSpec | undefined {
  return firstRefusal(chatRules, body);
}

function messagesOf(body: Record<string, unknown>): Message[] {
  return body.messages as Message[];
}

function callIds(message: Message): string[] {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return calls.map((call) => (isObject(call) ? String(call.id) : ''));
}

/** Tool messages must directly follow the assistant message whose tool_calls they answer, one per call. */
function toolPairing(messages: Message[]): ErrorSpec | undefined {
  let open: { at: number; ids: string[]; pending: Set<string> } | undefined;
  const unanswered = () => open && open.pending.size > 0
    ? bad(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open.pending].join(', ')}`, `messages.[${open.at}].role`)
    : undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message.role === 'tool') {
      if (!open) return bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      const id = String(message.tool_call_id);
      if (!open.ids.includes(id)) return bad(`Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`);
      open.pending.delete(id);
      continue;
    }
    const problem = unanswered();
    if (problem) return problem;
    const ids = message.role === 'assistant' ? callIds(message) : [];
    open = ids.length > 0 ? { at: i, ids, pending: new Set(ids) } : undefined;
  }
  return unanswered();
}
