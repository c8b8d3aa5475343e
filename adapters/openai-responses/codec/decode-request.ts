// A Responses client's create (or input_tokens) body → the canonical request. What only OpenAI's own service can do
// (prompt templates, background runs, built-in tools, item references) is refused; state and echo-only fields ride in
// extras, where the bridge (previous_response_id, conversation, store) and this codec's client encoders find them.
import type { CanonRequest, Codec, OutputFormat, ReasoningConfig, ReasoningEffort } from '../../../core/canonical.ts';
import { decodeInput } from './decode-input.ts';
import { decodeToolChoice, decodeTools } from './decode-tools.ts';
import { EFFORTS, FORMAT } from './tables.ts';
import { invalid, optArray, optBool, optNumber, optObject, optString, reqString, unsupported, type Obj } from './read.ts';

/** Fields kept as the client sent them: what the bridge resolves, and what the Response object echoes back. */
const KEPT = [
  'store', 'include', 'previous_response_id', 'conversation', 'metadata', 'prompt_cache_key', 'truncation',
  'service_tier', 'stream_options', 'client_metadata', 'max_tool_calls', 'user', 'safety_identifier', 'instructions',
  'tools', 'tool_choice', 'text', 'reasoning', 'parallel_tool_calls', 'temperature', 'top_p', 'max_output_tokens',
  'top_logprobs', 'prompt_cache_retention',
] as const;

const SUMMARIES = new Set(['auto', 'concise', 'detailed']);

export const decodeRequest: Codec['decodeRequest'] = (body, op, ctx) => {
  if (body.background === true) throw unsupported('background', 'Background responses are run by OpenAI only; this model is served by another provider.');
  if (body.prompt !== undefined && body.prompt !== null) throw unsupported('prompt', 'Prompt templates are stored by OpenAI only; send the prompt itself as instructions and input.');
  if (body.previous_response_id != null && body.conversation != null) {
    throw invalid('previous_response_id', "Mutually exclusive parameters: 'previous_response_id' and 'conversation'. Ensure you are only providing one of them.");
  }
  const { system, messages } = decodeInput(body.input, optString(body.instructions, 'instructions'));
  const { toolChoice, tools } = decodeToolChoice(body.tool_choice, decodeTools(body.tools));
  const parallelToolCalls = optBool(body.parallel_tool_calls, 'parallel_tool_calls');
  const include = (optArray(body.include, 'include') ?? []).map((v, i) => reqString(v, `include[${i}]`));
  const text = optObject(body.text, 'text');
  const output = outputFormat(optObject(text?.format, 'text.format'));
  const reasoning = reasoningConfig(optObject(body.reasoning, 'reasoning'));
  const maxOutputTokens = optNumber(body.max_output_tokens, 'max_output_tokens');
  if (maxOutputTokens !== undefined && (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1)) {
    throw invalid('max_output_tokens', "Invalid 'max_output_tokens': expected an integer of at least 1.");
  }
  const temperature = ranged(body.temperature, 'temperature', 2);
  const topP = ranged(body.top_p, 'top_p', 1);
  const topLogprobs = optNumber(body.top_logprobs, 'top_logprobs');
  const user = optString(body.safety_identifier, 'safety_identifier') ?? optString(body.user, 'user');
  optBool(body.store, 'store');
  optObject(body.metadata, 'metadata');

  const extras: Obj = {};
  for (const field of KEPT) if (body[field] !== undefined) extras[field] = body[field];
  return {
    operation: op,
    model: ctx.model,
    stream: op === 'generate' && optBool(body.stream, 'stream') === true,
    system,
    messages,
    tools,
    ...(toolChoice ? { toolChoice } : {}),
    ...(parallelToolCalls !== undefined ? { parallelToolCalls } : {}),
    ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { topP } : {}),
    ...(include.includes('message.output_text.logprobs') ? { logprobs: true } : {}),
    ...(topLogprobs !== undefined ? { topLogprobs } : {}),
    ...(output ? { output } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(user !== undefined ? { user } : {}),
    extras: { [FORMAT]: extras },
  } satisfies CanonRequest;
};

function ranged(v: unknown, param: string, max: number): number | undefined {
  const n = optNumber(v, param);
  if (n !== undefined && (n < 0 || n > max)) throw invalid(param, `Invalid '${param}': expected a number from 0 to ${max}.`);
  return n;
}

function outputFormat(format: Obj | undefined): OutputFormat | undefined {
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const schema = optObject(format.schema, 'text.format.schema');
      if (!schema) throw invalid('text.format.schema', "Missing required parameter: 'text.format.schema'.", 'missing_required_parameter');
      const strict = optBool(format.strict, 'text.format.strict');
      const description = optString(format.description, 'text.format.description');
      return {
        type: 'json_schema', name: reqString(format.name, 'text.format.name'), schema,
        ...(strict !== undefined ? { strict } : {}), ...(description !== undefined ? { description } : {}),
      };
    }
    default:
      throw invalid('text.format.type', `Invalid value: '${String(format.type)}'. Supported values are: 'text', 'json_object' and 'json_schema'.`);
  }
}

/** reasoning {effort, summary}: any effort but none turns reasoning on; a summary asks to see it. */
function reasoningConfig(reasoning: Obj | undefined): ReasoningConfig | undefined {
  if (!reasoning) return undefined;
  const effort = optString(reasoning.effort, 'reasoning.effort');
  if (effort !== undefined && !EFFORTS.includes(effort as ReasoningEffort)) {
    throw invalid('reasoning.effort', `Invalid value: '${effort}'. Supported values are: ${EFFORTS.map((e) => `'${e}'`).join(', ')}.`);
  }
  const summary = optString(reasoning.summary ?? reasoning.generate_summary, 'reasoning.summary');
  if (summary !== undefined && !SUMMARIES.has(summary)) throw invalid('reasoning.summary', `Invalid value: '${summary}'. Supported values are: 'auto', 'concise' and 'detailed'.`);
  if (effort === undefined && summary === undefined) return undefined;
  return {
    enabled: effort !== 'none',
    ...(effort !== undefined ? { effort: effort as ReasoningEffort } : {}),
    ...(summary !== undefined ? { show: true } : {}),
  };
}
