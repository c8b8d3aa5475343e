// What the real Anthropic Messages API refuses, one row per rule: the request's own fields here, `messages` in anthropic-turns.ts.
//
// Field lists: MessageCreateParams / MessageCountTokensParams of @anthropic-ai/sdk 1.12, beta fields included (Claude
// Code sends context_management with its beta header), plus the sampling fields the newest SDK types dropped but the API
// still takes on current models (temperature, top_p, top_k). Messages are the API's pydantic "loc: msg" lines as quoted
// in public reports ("stream_options: Extra inputs are not permitted", "thinking.enabled.budget_tokens: Input should be
// greater than or equal to 1024", "`max_tokens` must be greater than `thinking.budget_tokens`. …").
import type { ErrorSpec } from '../errors.ts';
import { isObject } from '../incoming.ts';
import { type AnthropicSubject, turnRules } from './anthropic-turns.ts';
import { firstOf, firstRefusal, type Rule, unknownKeys } from './rules.ts';

export type { AnthropicSubject } from './anthropic-turns.ts';

const SHARED_FIELDS = [
  'model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'cache_control', 'output_config', 'output_format', 'context_management',
  'mcp_servers', 'speed', 'user_profile_id', 'workspace_id',
];
const FIELDS: Record<AnthropicSubject['endpoint'], ReadonlySet<string>> = {
  create: new Set([
    ...SHARED_FIELDS, 'max_tokens', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'service_tier', 'container',
    'inference_geo', 'diagnostics', 'compaction', 'thread', 'fallbacks', 'billing_policy', 'fallback_credit_token',
  ]),
  count_tokens: new Set(SHARED_FIELDS),
};
const CUSTOM_TOOL_FIELDS = new Set([
  'type', 'name', 'description', 'input_schema', 'cache_control', 'strict', 'input_examples', 'defer_loading', 'allowed_callers', 'eager_input_streaming',
]);
// Server and client tools the API defines are typed by a dated version (web_search_20250305, bash_20250124, …).
const VERSIONED_TOOL = /_\d{8}$/;
const MIN_BUDGET = 1024;

const bad = (message: string): ErrorSpec => ({ status: 400, message });

export const anthropicRules: readonly Rule<AnthropicSubject>[] = [
  {
    refuses: 'fields the endpoint does not have (stream_options, input, max_tokens on count_tokens, …)',
    check: ({ body, endpoint }) => {
      const [extra] = unknownKeys(body, FIELDS[endpoint]);
      return extra === undefined ? undefined : bad(`${extra}: Extra inputs are not permitted`);
    },
  },
  { refuses: 'a missing model', check: ({ body }) => (typeof body.model === 'string' && body.model !== '' ? undefined : bad('model: Field required')) },
  { refuses: 'missing messages', check: ({ body }) => (body.messages === undefined ? bad('messages: Field required') : undefined) },
  {
    refuses: 'messages that are not a list of objects',
    check: ({ body }) => (Array.isArray(body.messages) && body.messages.every(isObject) ? undefined : bad('messages: Input should be a valid list')),
  },
  {
    refuses: 'a create without max_tokens, or one below 1',
    check: ({ body, endpoint }) => {
      if (endpoint !== 'create') return undefined;
      if (body.max_tokens === undefined) return bad('max_tokens: Field required');
      if (!Number.isInteger(body.max_tokens)) return bad('max_tokens: Input should be a valid integer');
      return (body.max_tokens as number) >= 1 ? undefined : bad('max_tokens: Input should be greater than or equal to 1');
    },
  },
  {
    refuses: 'temperature outside 0..1',
    check: ({ body }) => {
      const t = body.temperature;
      if (t === undefined || t === null) return undefined;
      if (typeof t !== 'number') return bad('temperature: Input should be a valid number');
      if (t < 0) return bad('temperature: Input should be greater than or equal to 0');
      return t > 1 ? bad('temperature: Input should be less than or equal to 1') : undefined;
    },
  },
  { refuses: 'custom tools without a name or an input_schema with a type, or with fields a tool does not have', check: ({ body }) => toolProblem(body.tools) },
  {
    refuses: 'a thinking budget below 1024, or not below max_tokens',
    check: ({ body, endpoint }) => {
      const thinking = isObject(body.thinking) ? body.thinking : undefined;
      if (thinking?.type !== 'enabled') return undefined;
      const budget = thinking.budget_tokens;
      if (budget === undefined) return bad('thinking.enabled.budget_tokens: Field required');
      if (!Number.isInteger(budget)) return bad('thinking.enabled.budget_tokens: Input should be a valid integer');
      if ((budget as number) < MIN_BUDGET) return bad(`thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_BUDGET}`);
      return endpoint === 'create' && (budget as number) >= (body.max_tokens as number)
        ? bad('`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size')
        : undefined;
    },
  },
  {
    refuses: 'a tool choice that forces tool use while thinking is on',
    check: ({ body }) => {
      const thinking = isObject(body.thinking) ? body.thinking.type : undefined;
      const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined;
      return (thinking === 'enabled' || thinking === 'adaptive') && (choice === 'any' || choice === 'tool')
        ? bad('Thinking may not be enabled when tool_choice forces tool use.')
        : undefined;
    },
  },
  ...turnRules,
];

export function refuseAnthropic(subject: AnthropicSubject): ErrorSpec | undefined {
  return firstRefusal(anthropicRules, subject);
}

function toolProblem(tools: unknown): ErrorSpec | undefined {
  if (!Array.isArray(tools)) return undefined;
  return firstOf(tools, (tool, i) => {
    if (!isObject(tool)) return bad(`tools.${i}: Input should be a valid dictionary or object to extract fields from`);
    if (tool.type !== undefined && tool.type !== 'custom') {
      return typeof tool.type === 'string' && VERSIONED_TOOL.test(tool.type)
        ? undefined
        : bad(`tools.${i}: Input tag '${String(tool.type)}' found using 'type' does not match any of the expected tags: 'custom', or a versioned tool type such as 'web_search_20250305'`);
    }
    const at = `tools.${i}.custom`;
    const [extra] = unknownKeys(tool, CUSTOM_TOOL_FIELDS);
    if (extra !== undefined) return bad(`${at}.${extra}: Extra inputs are not permitted`);
    if (typeof tool.name !== 'string') return bad(`${at}.name: Field required`);
    if (!isObject(tool.input_schema)) return bad(`${at}.input_schema: Field required`);
    return tool.input_schema.type === undefined ? bad(`${at}.input_schema.type: Field required`) : undefined;
  });
}
