// OpenAI Responses streams: usage and outcome from the terminal event, client model names on lifecycle events, and the failure event the gateway synthesizes.
import type { GatewayError } from '../../core/errors.ts';
import type { Ctx, FrameVerdict, SseFrame, StreamScanner } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { openaiTokenUsage } from '../shared/openai-usage.ts';
import { Scanner } from '../shared/scanner.ts';
import { contextVar } from '../../core/vars.ts';
import { formatFrame } from '../shared/sse.ts';
import { clientModelRewrite, parseObject, textCounter } from '../shared/stream-json.ts';

/** Where the stream stands; kept in the request's context so a synthesized response.failed continues the same response. */
export interface StreamPosition { id?: string; sequence: number }
export const POSITION = contextVar<StreamPosition>('openai-responses:position');

/** Used when the position is unknown: past any real stream, and within int32 for strictly typed clients. */
const FAR_SEQUENCE = 2_147_483_647;

// Events that carry the whole `response` object (and so its model name).
const LIFECYCLE = new Set([
  'response.created', 'response.queued', 'response.in_progress',
  'response.completed', 'response.incomplete', 'response.failed', 'response.done',
]);
// response.done is the non-public terminal some Codex backends send (docs/wire-formats.md#responses-stream).
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.done']);

const deltaChars = textCounter(['delta']);

// The spec puts code/message at the top level of an `error` event; real traffic also nests them (docs/wire-formats.md#responses-stream).
const errorMessage = (event: Record<string, any>): string =>
  String(event.error?.message ?? event.message ?? 'upstream stream error');

class ResponsesScanner extends Scanner {
  readonly #position: StreamPosition = { sequence: -1 };
  readonly #rewrite: string | undefined;
  #usage: Usage | undefined = undefined;

  constructor(ctx: Ctx) {
    super();
    ctx.set(POSITION, this.#position);
    this.#rewrite = clientModelRewrite(ctx);
  }

  frame(f: SseFrame): FrameVerdict {
    if (f.data === '' || f.data === '[DONE]') return 'pass';
    const position = this.#position;
    const rewrite = this.#rewrite;
    const named = f.event;
    // Text, reasoning and tool-argument deltas all carry their piece in `delta` (audio deltas are not text).
    if (named !== undefined && named.endsWith('.delta') && !named.includes('audio.')) this.chars += deltaChars(f.data);
    // Only lifecycle, terminal and error events are parsed; deltas pass untouched (a frame without an event line must be read to know).
    const wanted = named === undefined || named === 'error' || named === 'response.created' || TERMINAL.has(named)
      || (rewrite !== undefined && LIFECYCLE.has(named));
    const event = wanted ? parseObject(f.data) : undefined;
    if (!event) { position.sequence++; return 'pass'; }
    position.sequence = typeof event.sequence_number === 'number' ? event.sequence_number : position.sequence + 1;
    const type = typeof event.type === 'string' ? event.type : named;
    const response = event.response !== null && typeof event.response === 'object' ? event.response as Record<string, any> : undefined;
    if (typeof response?.id === 'string') position.id = response.id;
    if (type === 'error') this.failure = errorMessage(event);
    if (named === undefined && type?.endsWith('.delta') && !type.includes('audio.') && typeof event.delta === 'string') this.chars += event.delta.length;
    if (type !== undefined && TERMINAL.has(type)) {
      this.done = true;
      this.cut = type === 'response.incomplete' || response?.status === 'incomplete';
      this.#usage = openaiTokenUsage(response?.usage) ?? this.#usage;
      if (type === 'response.failed') this.failure = String(response?.error?.message ?? 'the response failed');
    }
    if (rewrite === undefined || typeof response?.model !== 'string') return 'pass';
    response.model = rewrite;
    return { replace: formatFrame(JSON.stringify(event), f.event) };
  }

  usage(): Usage | undefined { return this.#usage; }
  // Usage arrives only with the terminal event, whole.
  protected outputFinal(): boolean { return this.#usage !== undefined; }
}

export const scanResponsesStream = (ctx: Ctx): StreamScanner => new ResponsesScanner(ctx);

/**
 * A cut stream ends with the format's own terminal failure, never a bare `error` event: the coding-agent client rejects those.
 * The request's context, when given, lets it continue the stream's own response id and sequence numbers, which openai-node's
 * ResponseStream checks; without them the id is omitted and the SDK still reports an error.
 */
export function responsesStreamError(err: GatewayError, ctx?: Pick<Ctx, 'get'>): string {
  const position = ctx?.get(POSITION);
  const response = {
    ...(position?.id === undefined ? {} : { id: position.id }),
    object: 'response', status: 'failed', error: { code: err.code, message: err.message }, usage: null,
  };
  const sequence = position && position.sequence >= 0 ? position.sequence + 1 : FAR_SEQUENCE;
  return formatFrame(JSON.stringify({ type: 'response.failed', sequence_number: sequence, response }), 'response.failed');
}
