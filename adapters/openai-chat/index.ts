// OpenAI Chat Completions: where the model and stream flag are, usage (body and stream), error envelopes.
import type { GatewayError } from '../../core/errors.ts';
import type { Ctx, FormatAdapter, StreamScanner, SseFrame, FrameVerdict } from '../../core/types.ts';
import { num, type Usage } from '../../core/usage.ts';
import { formatFrame } from '../shared/sse.ts';
import { textCounter } from '../shared/stream-json.ts';
import { openaiErrorBody, openaiErrorObject } from '../shared/openai-errors.ts';
import { openaiModel, openaiModelList } from '../shared/openai-models.ts';

/** OpenAI usage object → canonical usage (prompt tokens include cached ones, completion includes reasoning). */
export function chatUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const usage = u as Record<string, any>;
  return {
    input: num(usage.prompt_tokens),
    cacheRead: num(usage.prompt_tokens_details?.cached_tokens),
    cacheWrite: num(usage.prompt_tokens_details?.cache_write_tokens),
    output: num(usage.completion_tokens),
    reasoning: num(usage.completion_tokens_details?.reasoning_tokens),
  };
}

const STRIP_USAGE = 'openai-chat:strip-usage';
const NULL_USAGE = /,"usage":null(?=[,}])|"usage":null,/;
// The answer cut by max_tokens / max_completion_tokens.
const CUT = /"finish_reason":\s*"length"/;
// Delta fields holding answer text: content, tool-call arguments, reasoning (some upstreams), refusals.
const answerChars = textCounter(['content', 'arguments', 'reasoning_content', 'refusal']);

const cutByCap = (json: unknown): boolean => {
  const choices = (json as Record<string, unknown> | undefined)?.choices;
  return Array.isArray(choices) && choices.some((c) => c?.finish_reason === 'length');
};

function scanStream(ctx: Ctx): StreamScanner {
  let usage: Usage | undefined;
  let done = false;
  let cut = false;
  let chars = 0;
  let error: string | undefined;
  const rewrite = ctx.model !== undefined && ctx.upstreamModel !== undefined && ctx.model !== ctx.upstreamModel ? ctx.model : undefined;
  const strip = ctx.flags[STRIP_USAGE] === true;
  return {
    frame(f: SseFrame): FrameVerdict {
      if (f.data === '[DONE]') { done = true; return 'pass'; }
      chars += answerChars(f.data);
      if (!cut && CUT.test(f.data)) cut = true;
      // The usage key was forced upstream; a client that did not ask for it sees chunks without it.
      if (strip && !rewrite && f.data.includes('"usage":null')) return { replace: f.raw.replace(NULL_USAGE, '') };
      const hasUsage = f.data.includes('"usage"') && !f.data.includes('"usage":null');
      const hasError = f.data.includes('"error"');
      if (!hasUsage && !hasError && !rewrite) return 'pass';
      let chunk: Record<string, any>;
      try { chunk = JSON.parse(f.data); } catch { return 'pass'; }
      if (!chunk || typeof chunk !== 'object' || Array.isArray(chunk)) return 'pass';
      if (chunk.error) { error = typeof chunk.error === 'string' ? chunk.error : String(chunk.error.message ?? 'upstream stream error'); return 'pass'; }
      if (chunk.usage) {
        usage = chatUsage(chunk.usage);
        if (strip && Array.isArray(chunk.choices) && chunk.choices.length === 0) return 'drop';
        if (strip) delete chunk.usage;
      } else if (strip && chunk.usage === null) delete chunk.usage;
      if (rewrite) chunk.model = rewrite;
      return hasUsage && strip || rewrite ? { replace: formatFrame(JSON.stringify(chunk), f.event) } : 'pass';
    },
    usage: () => usage,
    terminal: () => done,
    error: () => error,
    incomplete: () => cut,
    started: () => chars > 0,
    // Usage comes once, in the last chunk: once seen, the output count is final.
    streamed: () => ({ chars, outputFinal: usage !== undefined }),
  };
}

export const openaiChat: FormatAdapter = {
  name: 'openai-chat',
  platforms: ['openai'],
  upstreamAuth: 'bearer',
  model: { body: 'model' },
  requestSchema: {
    type: 'object', required: ['messages'],
    properties: {
      messages: { type: 'array', minItems: 1, items: { type: 'object', required: ['role'], properties: { role: { type: 'string' } } } },
      stream: { type: 'boolean' },
      stream_options: { type: ['object', 'null'] },
    },
  },
  isStream: (body) => body?.stream === true,
  prepareUpstream(body, ctx) {
    // Every stream must be metered, so always ask for the usage chunk and hide it from clients that did not.
    if (body.stream !== true) return false;
    const options = (body.stream_options ?? {}) as Record<string, unknown>;
    if (options.include_usage === true) return false;
    body.stream_options = { ...options, include_usage: true };
    ctx.flags[STRIP_USAGE] = true;
    return true;
  },
  usageFromBody: (json) => chatUsage((json as Record<string, unknown> | undefined)?.usage),
  incomplete: cutByCap,
  scanStream,
  setModel(json, model) { if (typeof json.model === 'string') json.model = model; },
  errorBody: (err: GatewayError) => openaiErrorBody(err),
  streamError: (err: GatewayError) => formatFrame(JSON.stringify({ error: openaiErrorObject(err) })),
  keepalive: ': keepalive\n\n',
  modelList: openaiModelList,
  modelInfo: openaiModel,
};
