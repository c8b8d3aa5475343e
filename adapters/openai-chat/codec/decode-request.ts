// A chat client's request body → the canonical request. What changes the answer and no translated upstream can give
// (audio output, the built-in web search) is refused; what is harmless to lose is dropped (see DROPPED).
import type { CanonRequest, Operation, ReasoningConfig, ReasoningEffort } from '../../../core/canonical.ts';
import { invalid, list, obj, optBool, optEnum, optNum, optStr, unsupported, type Obj } from './checks.ts';
import { decodeMessages } from './decode-messages.ts';
import { decodeResponseFormat, decodeToolChoice, decodeTools } from './decode-tools.ts';
import { FORMAT } from './tables.ts';

const EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
const MAX_INT = Number.MAX_SAFE_INTEGER;

/**
 * Fields a chat client may send that a translated request leaves behind, and why: bookkeeping on OpenAI's side
 * (store, metadata, service_tier, prompt_cache_key, prompt_cache_options, prompt_cache_retention), latency or style knobs
 * other upstreams lack (prediction, verbosity, logit_bias, stream_options.include_obfuscation), and OpenAI's own
 * moderation settings. Anything else unknown is dropped as well: nothing a client sends reaches an upstream unread.
 */
export const DROPPED = [
  'store', 'metadata', 'service_tier', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'prediction',
  'verbosity', 'logit_bias', 'moderation',
] as const;

function stopSequences(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const stops = typeof raw === 'string' ? [raw] : list(raw, 'stop').map((s, i) => {
    if (typeof s !== 'string') throw invalid(`stop[${i}]`, `Invalid type for 'stop[${i}]': expected a string.`, 'invalid_type');
    return s;
  });
  if (stops.length > 4) throw invalid('stop', "Invalid 'stop': expected at most 4 sequences.");
  return stops;
}

function reasoning(body: Obj): ReasoningConfig | undefined {
  const effort = optEnum(body.reasoning_effort, 'reasoning_effort', EFFORTS);
  if (effort === undefined) return undefined;
  // A chat client sees reasoning in reasoning_content (the de-facto field) when the upstream shows it.
  return effort === 'none' ? { enabled: false, effort } : { enabled: true, effort, show: true };
}

/** Output a translated upstream cannot give in a chat answer: refused rather than silently lost. */
function refuseUnservable(body: Obj): void {
  const modalities = body.modalities === undefined || body.modalities === null ? [] : list(body.modalities, 'modalities');
  if (modalities.includes('audio') || (body.audio !== undefined && body.audio !== null)) {
    throw unsupported('modalities', "Audio output cannot be translated for this group's upstream.");
  }
  if (body.web_search_options !== undefined && body.web_search_options !== null) {
    throw unsupported('web_search_options', "The built-in web search cannot be translated for this group's upstream.");
  }
}

export function decodeRequest(body: Obj, op: Operation, ctx: { model: string }): CanonRequest {
  refuseUnservable(body);
  const { system, messages } = decodeMessages(body.messages);
  const { tools, toolChoice } = decodeToolChoice(body, decodeTools(body));
  const stream = optBool(body.stream, 'stream') === true;
  const options = body.stream_options === undefined || body.stream_options === null ? {} : obj(body.stream_options, 'stream_options');
  const includeUsage = stream && optBool(options.include_usage, 'stream_options.include_usage') === true;
  const n = optNum(body.n, 'n', 1, 128, true);
  const fields: Partial<CanonRequest> = {
    toolChoice,
    parallelToolCalls: optBool(body.parallel_tool_calls, 'parallel_tool_calls'),
    maxOutputTokens: optNum(body.max_completion_tokens, 'max_completion_tokens', 1, MAX_INT, true) ?? optNum(body.max_tokens, 'max_tokens', 1, MAX_INT, true),
    temperature: optNum(body.temperature, 'temperature', 0, 2),
    topP: optNum(body.top_p, 'top_p', 0, 1),
    stop: stopSequences(body.stop),
    seed: optNum(body.seed, 'seed', -MAX_INT, MAX_INT, true),
    presencePenalty: optNum(body.presence_penalty, 'presence_penalty', -2, 2),
    frequencyPenalty: optNum(body.frequency_penalty, 'frequency_penalty', -2, 2),
    n: n === 1 ? undefined : n,
    logprobs: optBool(body.logprobs, 'logprobs') || undefined,
    topLogprobs: optNum(body.top_logprobs, 'top_logprobs', 0, 20, true),
    output: decodeResponseFormat(body.response_format),
    reasoning: reasoning(body),
    user: optStr(body.safety_identifier, 'safety_identifier') ?? optStr(body.user, 'user'),
  };
  const request: CanonRequest = {
    operation: op, model: ctx.model, stream: op === 'generate' && stream, system, messages, tools,
    extras: includeUsage ? { [FORMAT]: { includeUsage: true } } : {},
  };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (request as unknown as Obj)[key] = value;
  return request;
}
