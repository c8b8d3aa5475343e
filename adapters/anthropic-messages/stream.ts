// Anthropic Messages streams: usage from message_start overwritten by message_delta, message_stop as the end, event: error as failure.
import type { Ctx, FrameVerdict, SseFrame, StreamScanner } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { Scanner } from '../shared/scanner.ts';
import { formatFrame } from '../shared/sse.ts';
import { clientModelRewrite, parseObject, textCounter } from '../shared/stream-json.ts';
import { anthropicUsage, overwriteUsage } from './usage.ts';

// Content deltas and pings need no reading; only these events carry usage, the model, the end or a failure.
const READ = new Set(['message_start', 'message_delta', 'message_stop', 'error']);
// content_block_delta fields holding answer text: text_delta, thinking_delta, input_json_delta.
const deltaChars = textCounter(['text', 'thinking', 'partial_json']);

class MessagesScanner extends Scanner {
  readonly #rewrite: string | undefined;
  #snapshot: Record<string, unknown> | undefined = undefined;
  // message_start's output_tokens is a placeholder; the count is final once a message_delta reports it.
  #outputFinal = false;

  constructor(ctx: Ctx) {
    super();
    this.#rewrite = clientModelRewrite(ctx);
  }

  frame(f: SseFrame): FrameVerdict {
    if (f.event === 'content_block_delta') { this.chars += deltaChars(f.data); return 'pass'; }
    if (f.event !== undefined && !READ.has(f.event)) return 'pass';
    if (f.event === 'message_stop') { this.done = true; return 'pass'; }
    const event = parseObject(f.data);
    if (!event) return 'pass';
    switch (event.type ?? f.event) {
      case 'message_start': {
        const message = event.message as Record<string, any> | undefined;
        this.#snapshot = { ...message?.usage };
        if (this.#rewrite === undefined || typeof message?.model !== 'string') return 'pass';
        message.model = this.#rewrite;
        return { replace: formatFrame(JSON.stringify(event), f.event) };
      }
      case 'message_delta':
        if (event.usage && typeof event.usage === 'object') {
          overwriteUsage(this.#snapshot ??= {}, event.usage);
          if (typeof event.usage.output_tokens === 'number') this.#outputFinal = true;
        }
        if (event.delta?.stop_reason === 'max_tokens') this.cut = true;
        return 'pass';
      case 'content_block_delta':
        this.chars += deltaChars(f.data);
        return 'pass';
      case 'message_stop':
        this.done = true;
        return 'pass';
      case 'error':
        this.failure = String(event.error?.message ?? 'upstream stream error');
        return 'pass';
      default:
        return 'pass';
    }
  }

  usage(): Usage | undefined { return anthropicUsage(this.#snapshot); }
  protected outputFinal(): boolean { return this.#outputFinal; }
}

export const scanMessagesStream = (ctx: Ctx): StreamScanner => new MessagesScanner(ctx);
