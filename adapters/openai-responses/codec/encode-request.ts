// The canonical request → a body for an OpenAI upstream on /v1/responses (or /v1/responses/input_tokens to count).
// Translated requests are never stored upstream (store: false); OpenAI's own reasoning is replayed from encrypted_content.
import { createHash } from 'node:crypto';
import type { CanonRequest, CanonTool, Codec, ReasoningConfig, ToolChoice } from '../../../core/canonical.ts';
import { GatewayError } from '../../../core/errors.ts';
import { signedFor } from '../../shared/signatures.ts';
import { fitName, OPENAI_NAMES } from '../../shared/tool-names.ts';
import { encodeInput } from './encode-input.ts';
import { effortOfBudget, FORMAT, UPSTREAM_EFFORT } from './tables.ts';
import type { Obj } from './read.ts';

/** The API refuses a smaller output cap. */
const MIN_OUTPUT_TOKENS = 16;
/** The longest safety_identifier the API takes. */
const MAX_IDENTIFIER = 64;

export const encodeRequest: Codec['encodeRequest'] = (req) => {
  if (req.n !== undefined && req.n > 1) throw new GatewayError(400, 'unsupported_parameter', 'This model returns one answer per request; n must be 1.', { param: 'n' });
  const counting = req.operation === 'count_tokens';
  const body: Obj = { model: req.model };
  const instructions = req.system.map((b) => b.text).join('\n\n');
  if (instructions !== '') body.instructions = instructions;
  body.input = encodeInput(req.messages);
  // OpenAI takes a tool choice and the parallel switch only beside tools.
  if (req.tools.length > 0) {
    body.tools = req.tools.map(encodeTool);
    if (req.toolChoice) body.tool_choice = encodeToolChoice(req.toolChoice, req.tools);
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  const format = encodeFormat(req);
  if (format) body.text = { format };
  const reasoning = encodeReasoning(req.reasoning);
  if (reasoning) body.reasoning = reasoning;
  if (counting) return { path: '/v1/responses/input_tokens', body };

  body.stream = req.stream;
  // Reasoning comes back encrypted so that the next turn can replay it without OpenAI storing anything.
  const replaysReasoning = req.messages.some((m) => m.content.some((b) => b.type === 'reasoning' && signedFor(b.signature, FORMAT) !== undefined));
  const include: string[] = [];
  if (reasoning || replaysReasoning) include.push('reasoning.encrypted_content');
  if (req.logprobs) include.push('message.output_text.logprobs');
  if (include.length > 0) body.include = include;
  body.store = false;
  if (req.maxOutputTokens !== undefined) body.max_output_tokens = Math.max(MIN_OUTPUT_TOKENS, req.maxOutputTokens);
  if (req.temperature !== undefined) body.temperature = Math.min(2, Math.max(0, req.temperature));
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.topLogprobs !== undefined) body.top_logprobs = req.topLogprobs;
  if (req.user !== undefined && req.user !== '') body.safety_identifier = identifier(req.user);
  // Dropped, having no Responses field: stop sequences, seed, presence/frequency penalties, top_k.
  return { path: '/v1/responses', body };
};

function encodeTool(tool: CanonTool): Obj {
  const name = fitName(tool.name, OPENAI_NAMES);
  const description = tool.description !== undefined ? { description: tool.description } : {};
  if (tool.kind === 'custom') return { type: 'custom', name, ...description, ...(tool.format !== undefined ? { format: tool.format } : {}) };
  // strict is always stated: the Responses API makes an unstated one true, which refuses most schemas.
  return { type: 'function', name, ...description, parameters: objectSchema(tool.parameters), strict: tool.strict ?? false };
}

const objectSchema = (schema: Obj): Obj => (schema.type === undefined ? { type: 'object', properties: {}, ...schema } : schema);

function encodeToolChoice(choice: ToolChoice, tools: CanonTool[]): unknown {
  if (choice.type !== 'tool') return choice.type;
  const tool = tools.find((t) => t.name === choice.name);
  return { type: tool?.kind === 'custom' ? 'custom' : 'function', name: fitName(choice.name, OPENAI_NAMES) };
}

function encodeFormat(req: CanonRequest): Obj | undefined {
  const output = req.output;
  if (!output) return undefined;
  if (output.type !== 'json_schema') return { type: output.type };
  return {
    type: 'json_schema', name: fitName(output.name, OPENAI_NAMES), schema: output.schema,
    ...(output.strict !== undefined ? { strict: output.strict } : {}),
    ...(output.description !== undefined ? { description: output.description } : {}),
  };
}

/** Effort from the effort or the budget; a summary when the client shows reasoning. Reasoning turned off sends none. */
function encodeReasoning(config: ReasoningConfig | undefined): Obj | undefined {
  if (!config || config.enabled === false) return undefined;
  const effort = config.effort ?? (config.budgetTokens !== undefined ? effortOfBudget(config.budgetTokens) : undefined);
  const reasoning: Obj = {};
  if (effort !== undefined) reasoning.effort = UPSTREAM_EFFORT[effort];
  if (config.show) reasoning.summary = 'auto';
  return Object.keys(reasoning).length > 0 || config.enabled ? reasoning : undefined;
}

/** The end user's id as the API takes it: a longer one (Claude Code's metadata.user_id) is replaced by its hash. */
const identifier = (user: string): string =>
  user.length <= MAX_IDENTIFIER ? user : createHash('sha256').update(user).digest('hex');
