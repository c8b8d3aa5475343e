// What the real Responses API refuses, one row per rule, with OpenAI's own words, param and code.
//
// Sources: field list from openai-node 7.57 (ResponseCreateParamsBase) plus `client_metadata`, which Codex CLI 0.169
// sends (fixtures/clients/codex-cli-0.169.0.json); messages as the API answers them, quoted in public issue reports:
// "Unknown parameter: 'reasoning'." (param, code unknown_parameter), "No tool call found for function call output with
// call_id call_….", "No tool output found for function call call_….", "Invalid value: 'input_text'. Supported values
// are: 'output_text' and 'refusal'." (param input[1].content[0]), "The encrypted content gAAA...DQ== could not be
// verified." (code invalid_encrypted_content).
import type { ErrorSpec } from '../errors.ts';
import { isObject } from '../incoming.ts';
import { unseal } from '../signatures.ts';
import { firstOf, firstRefusal, quotedList, type Rule, unknownKeys } from './rules.ts';

type Item = Record<string, unknown>;

export interface ResponsesSubject {
  body: Record<string, unknown>;
  /** POST /v1/responses needs a model; /v1/responses/input_tokens does not. */
  needsModel: boolean;
}

const FIELDS = new Set([
  'access_programs', 'background', 'context_management', 'conversation', 'image', 'include', 'input', 'instructions', 'max_output_tokens',
  'max_tool_calls', 'metadata', 'model', 'moderation', 'parallel_tool_calls', 'previous_response_id', 'prompt', 'prompt_cache_key',
  'prompt_cache_options', 'prompt_cache_retention', 'reasoning', 'safety_identifier', 'service_tier', 'store', 'stream', 'stream_options',
  'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'user', 'client_metadata',
]);

const ROLES = ['assistant', 'system', 'developer', 'user'];
/** Every content part type the API knows, listed in its own order. */
const PART_TYPES = ['input_text', 'input_image', 'input_audio', 'output_text', 'refusal', 'input_file', 'computer_screenshot', 'summary_text', 'encrypted_content'];
/** What each role's message may hold: the model's own words, or input. */
const PARTS_BY_ROLE: Record<string, readonly string[]> = {
  assistant: ['output_text', 'refusal'],
  user: ['input_text', 'input_image', 'input_file'],
  system: ['input_text', 'input_image', 'input_file'],
  developer: ['input_text', 'input_image', 'input_file'],
};

const bad = (message: string, param: string | null, code: string | null = null): ErrorSpec => ({ status: 400, message, param, code });

export const responsesRules: readonly Rule<ResponsesSubject>[] = [
  {
    refuses: 'top-level fields the API does not have',
    check: ({ body }) => {
      const [extra] = unknownKeys(body, FIELDS);
      return extra === undefined ? undefined : bad(`Unknown parameter: '${extra}'.`, extra, 'unknown_parameter');
    },
  },
  {
    refuses: 'a missing model',
    check: ({ body, needsModel }) => (needsModel && (typeof body.model !== 'string' || body.model === '')
      ? bad("Missing required parameter: 'model'.", 'model', 'missing_required_parameter')
      : undefined),
  },
  {
    refuses: 'input that is neither a string nor a list of items',
    check: ({ body }) => (body.input === undefined || typeof body.input === 'string' || (Array.isArray(body.input) && body.input.every(isObject))
      ? undefined
      : bad("Invalid type for 'input': expected a string or an array of input items.", 'input', 'invalid_type')),
  },
  {
    refuses: 'an output cap below 1',
    check: ({ body }) => {
      const cap = body.max_output_tokens;
      return cap === undefined || cap === null || (Number.isInteger(cap) && (cap as number) >= 1)
        ? undefined
        : bad("Invalid 'max_output_tokens': expected an integer of at least 1.", 'max_output_tokens', 'invalid_value');
    },
  },
  {
    refuses: 'message roles the format does not have (chat roles such as tool)',
    check: ({ body }) => firstOf(itemsOf(body), (item, i) => (isMessage(item) && !ROLES.includes(item.role as string)
      ? bad(`Invalid value: '${String(item.role)}'. Supported values are: ${quotedList(ROLES)}.`, `input[${i}].role`, 'invalid_value')
      : undefined)),
  },
  { refuses: 'content part types the message role does not take', check: ({ body }) => firstOf(itemsOf(body), partTypeProblem) },
  {
    refuses: 'a function_call_output that answers no function_call before it (unless continuing a previous response)',
    check: ({ body }) => {
      if (body.previous_response_id !== undefined && body.previous_response_id !== null) return undefined;
      const called = new Set<unknown>();
      return firstOf(itemsOf(body), (item) => {
        if (item.type === 'function_call') called.add(item.call_id);
        return item.type === 'function_call_output' && !called.has(item.call_id)
          ? bad(`No tool call found for function call output with call_id ${String(item.call_id)}.`, 'input')
          : undefined;
      });
    },
  },
  {
    refuses: 'a function_call with no function_call_output after it',
    check: ({ body }) => {
      const items = itemsOf(body);
      return firstOf(items, (item, i) => (item.type === 'function_call'
        && !items.slice(i + 1).some((later) => later.type === 'function_call_output' && later.call_id === item.call_id)
        ? bad(`No tool output found for function call ${String(item.call_id)}.`, 'input')
        : undefined));
    },
  },
  {
    refuses: 'reasoning encrypted_content this API did not mint',
    check: ({ body }) => firstOf(itemsOf(body), (item) => (item.type === 'reasoning' && item.encrypted_content !== undefined && item.encrypted_content !== null
      && unseal('openai', item.encrypted_content) === undefined
      ? bad(`The encrypted content ${abbreviate(item.encrypted_content)} could not be verified.`, null, 'invalid_encrypted_content')
      : undefined)),
  },
];

export function refuseResponses(subject: ResponsesSubject): ErrorSpec | undefined {
  return firstRefusal(responsesRules, subject);
}

function itemsOf(body: Record<string, unknown>): Item[] {
  return Array.isArray(body.input) ? body.input : [];
}

function isMessage(item: Item): boolean {
  return item.type === 'message' || (item.type === undefined && 'role' in item);
}

function partTypeProblem(item: Item, i: number): ErrorSpec | undefined {
  if (!isMessage(item) || !Array.isArray(item.content)) return undefined;
  const allowed = PARTS_BY_ROLE[item.role as string];
  return firstOf(item.content, (part, j) => {
    const type = String(isObject(part) ? part.type : undefined);
    if (!PART_TYPES.includes(type)) return bad(`Invalid value: '${type}'. Supported values are: ${quotedList(PART_TYPES)}.`, `input[${i}].content[${j}].type`, 'invalid_value');
    return allowed.includes(type) ? undefined : bad(`Invalid value: '${type}'. Supported values are: ${quotedList(allowed)}.`, `input[${i}].content[${j}]`, 'invalid_value');
  });
}

/** The API quotes a token by its ends only: gAAA...DQ==. */
function abbreviate(token: unknown): string {
  const text = String(token);
  return text.length > 12 ? `${text.slice(0, 4)}...${text.slice(-4)}` : text;
}
