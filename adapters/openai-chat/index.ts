// OpenAI Chat Completions: where the model and stream flag are, usage (body and stream), error envelopes.
import type { GatewayError } from '../../core/errors.ts';
import type { Ctx, FormatAdapter, SseFrame, FrameVerdict } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { contextVar } from '../../core/vars.ts';
import { formatFrame } from '../shared/sse.ts';
import { Scanner } from '../shared/scanner.ts';
import { clientModelRewrite, hasErrorKey, hasUsageKey, parseObject, textCounter } from '../shared/stream-json.ts';
import { openaiErrorBody, openaiErrorObject } from '../shared/openai-errors.ts';
import { openaiModel, openaiModelList, openaiModelListUpstream } from '../shared/openai-models.ts';
import { OPENAI_FAMILY } from '../shared/openai-family.ts';
import { chatUsage } from './usage.ts';
import { codec } from './codec/index.ts';

export { chatUsage };

/** The client did not ask for the usage chunk the gateway asked for on its behalf: the scanner drops it. */
const STRIP_USAGE = contextVar<boolean>('openai-chat:strip-usage');
const NULL_USAGE = /,"usage":null(?=[,}])|"usage":null,/;
// The answer cut by max_tokens / max_completion_tokens.
const CUT = /"finish_reason":\s*"length"/;
// Delta fields holding answer text: content, tool-call arguments, reasoning (some upstreams), refusals.
const answerChars = textCounter(['content', 'arguments', 'reasoning_content', 'refusal']);

const cutByCap = (json: unknown): boolean => {
  const choices = (json as Record<string, unknown> | undefined)?.choices;
  return Array.isArray(choices) && choices.some((c) => c?.finish_reason === 'length');
};

class ChatScanner extends Scanner {
  #usage: Usage | undefined = undefined;
  readonly #rewrite: string | undefined;
  readonly #strip: boolean;

  constructor(ctx: Ctx) {
    super();
    this.#rewrite = clientModelRewrite(ctx);
    this.#strip = ctx.get(STRIP_USAGE) === true;
  }

  frame(f: SseFrame): FrameVerdict {
    if (f.data === '[DONE]') { this.done = true; return 'pass'; }
    this.chars += answerChars(f.data);
    if (!this.cut && CUT.test(f.data)) this.cut = true;
    const rewrite = this.#rewrite;
    const strip = this.#strip;
    // The usage key was forced upstream; a client that did not ask for it sees chunks without it.
    const usageKey = hasUsageKey(f.data);
    const nullUsage = usageKey && f.data.includes('"usage":null');
    if (strip && !rewrite && nullUsage) return { replace: f.raw.replace(NULL_USAGE, '') };
    const hasUsage = usageKey && !nullUsage;
    const hasError = hasErrorKey(f.data);
    if (!hasUsage && !hasError && !rewrite) return 'pass';
    const chunk = parseObject(f.data);
    if (!chunk) return 'pass';
    if (chunk.error) { this.failure = typeof chunk.error === 'string' ? chunk.error : String(chunk.error.message ?? 'upstream stream error'); return 'pass'; }
    if (chunk.usage) {
      this.#usage = chatUsage(chunk.usage);
      if (strip && Array.isArray(chunk.choices) && chunk.choices.length === 0) return 'drop';
      if (strip) delete chunk.usage;
    } else if (strip && chunk.usage === null) delete chunk.usage;
    if (rewrite) chunk.model = rewrite;
    return hasUsage && strip || rewrite ? { replace: formatFrame(JSON.stringify(chunk), f.event) } : 'pass';
  }

  usage(): Usage | undefined { return this.#usage; }
  // Usage comes once, in the last chunk: once seen, the output count is final.
  protected outputFinal(): boolean { return this.#usage !== undefined; }
}

export const openaiChat: FormatAdapter = {
  name: 'openai-chat',
  ...OPENAI_FAMILY,
  codec,
  // Chat completions is one route; everything else of the format (model lists) is native.
  operation: (path) => (/\/chat\/completions$/.test(path) ? 'generate' : undefined),
  model: { body: 'model' },
  jsonBody: true,
  forwardQuery: [],
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
    ctx.set(STRIP_USAGE, true);
    return true;
  },
  usageFromBody: (json) => chatUsage((json as Record<string, unknown> | undefined)?.usage),
  incomplete: cutByCap,
  scanStream: (ctx) => new ChatScanner(ctx),
  setModel(json, model) { if (typeof json.model === 'string') json.model = model; },
  errorBody: (err: GatewayError) => openaiErrorBody(err),
  streamError: (err: GatewayError) => formatFrame(JSON.stringify({ error: openaiErrorObject(err) })),
  keepalive: ': keepalive\n\n',
  probe: {
    path: () => '/v1/chat/completions',
    body: (model) => ({ model, messages: [{ role: 'user', content: 'ping' }], max_completion_tokens: 1 }),
  },
  modelList: openaiModelList,
  modelInfo: openaiModel,
  modelListUpstream: openaiModelListUpstream,
};
