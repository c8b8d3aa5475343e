// The canonical request → a Chat Completions body for a chat upstream (OpenAI or an OpenAI-compatible provider).
// Streams always ask for the usage chunk (every stream is metered); tool names are fitted to OpenAI's rule and restored
// on the way back; what a chat answer cannot hold (more than one choice, logprobs) is refused.
import { createHash } from 'node:crypto';
import type { CanonRequest, CanonTool, OutputFormat, ReasoningConfig, ToolChoice } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { fitName, OPENAI_NAMES } from '../../shared/tool-names.ts';
import type { Obj } from './checks.ts';
import { encodeMessages } from './encode-messages.ts';
import { strictSchema } from './strict-schema.ts';
import { EFFORT_BY_BUDGET } from './tables.ts';

export const CHAT_PATH = '/v1/chat/completions';

const refuse = (param: string, message: string) => new GatewayError(400, 'unsupported_value', message, { param });
const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));

function tool(t: CanonTool): Obj {
  const name = fitName(t.name, OPENAI_NAMES);
  if (t.kind === 'custom') {
    const format = t.format as Obj | undefined;
    // The canonical grammar is flat ({type, syntax, definition}); chat nests it under `grammar`.
    const chatFormat = format?.type === 'grammar'
      ? { type: 'grammar', grammar: { syntax: format.syntax, definition: format.definition } }
      : format ? { type: 'text' } : undefined;
    return { type: 'custom', custom: { name, ...(t.description ? { description: t.description } : {}), ...(chatFormat ? { format: chatFormat } : {}) } };
  }
  return {
    type: 'function',
    function: {
      name, ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.strict ? strictSchema(t.parameters) : t.parameters,
      ...(t.strict !== undefined ? { strict: t.strict } : {}),
    },
  };
}

function toolChoice(choice: ToolChoice, tools: CanonTool[]): unknown {
  if (choice.type !== 'tool') return choice.type;
  const name = fitName(choice.name, OPENAI_NAMES);
  return tools.find((t) => t.name === choice.name)?.kind === 'custom' ? { type: 'custom', custom: { name } } : { type: 'function', function: { name } };
}

function responseFormat(output: OutputFormat): Obj {
  if (output.type !== 'json_schema') return { type: output.type };
  return {
    type: 'json_schema',
    json_schema: {
      name: fitName(output.name, OPENAI_NAMES),
      ...(output.description !== undefined ? { description: output.description } : {}),
      schema: output.strict ? strictSchema(output.schema) : output.schema,
      ...(output.strict !== undefined ? { strict: output.strict } : {}),
    },
  };
}

/** reasoning_effort: the effort named, else the one whose budget covers the budget asked; nothing when off or unsaid. */
function effort(reasoning: ReasoningConfig | undefined): string | undefined {
  if (!reasoning) return undefined;
  if (reasoning.effort) return reasoning.effort;
  const budget = reasoning.budgetTokens;
  if (reasoning.enabled === false || budget === undefined || budget < 0) return undefined;
  return EFFORT_BY_BUDGET.find(([max]) => budget <= max)?.[1];
}

/** OpenAI takes an end-user id of at most 64 characters; a longer one (Claude Code's metadata.user_id) is hashed to fit. */
const endUser = (user: string): string => (user.length <= 64 ? user : createHash('sha256').update(user).digest('hex'));

export function encodeRequest(req: CanonRequest): { path: string; body: Obj } {
  if (req.operation !== 'generate') throw refuse('operation', 'A chat upstream has no token counting endpoint.');
  if (req.n !== undefined && req.n > 1) throw refuse('n', "More than one choice ('n' > 1) cannot be translated: the answer carries one.");
  if (req.logprobs) throw refuse('logprobs', 'Log probabilities cannot be translated: the answer has no place for them.');
  if (req.stop && req.stop.length > 4) throw refuse('stop', 'A chat upstream takes at most 4 stop sequences.');
  const body: Obj = { model: req.model, messages: encodeMessages(req) };
  if (req.tools.length > 0) {
    body.tools = req.tools.map(tool);
    if (req.toolChoice) body.tool_choice = toolChoice(req.toolChoice, req.tools);
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  const set = (key: string, value: unknown) => { if (value !== undefined) body[key] = value; };
  set('max_completion_tokens', req.maxOutputTokens);
  set('temperature', req.temperature === undefined ? undefined : clamp(req.temperature, 0, 2));
  set('top_p', req.topP === undefined ? undefined : clamp(req.topP, 0, 1));
  set('stop', req.stop?.length ? req.stop : undefined);
  set('seed', req.seed);
  set('presence_penalty', req.presencePenalty === undefined ? undefined : clamp(req.presencePenalty, -2, 2));
  set('frequency_penalty', req.frequencyPenalty === undefined ? undefined : clamp(req.frequencyPenalty, -2, 2));
  set('response_format', req.output && req.output.type !== 'text' ? responseFormat(req.output) : undefined);
  set('reasoning_effort', effort(req.reasoning));
  set('user', req.user === undefined ? undefined : endUser(req.user));
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { path: CHAT_PATH, body };
}
