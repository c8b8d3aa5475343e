// Anthropic Messages streams: usage from message_start overwritten by message_delta, message_stop as the end, event: error as failure.
import type { Ctx, FrameVerdict, SseFrame, StreamScanner } from '../../core/types.ts';
import { formatFrame } from '../shared/sse.ts';
import { clientModelRewrite, parseObject, textCounter } from '../shared/stream-json.ts';
import { anthropicUsage, overwriteUsage } from './usage.ts';

// Content deltas and pings need no reading; only these events carry usage, the model, the end or a failure.
const READ = new Set(['message_start', 'message_delta', 'message_stop', 'error']);
// content_block_delta fields holding answer text: text_delta, thinking_delta, input_json_delta.
const deltaChars = textCounter(['text', 'thinking', 'partial_json']);

export function scanMessagesStream(ctx: Ctx): StreamScanner {
  const rewrite = clientModelRewrite(ctx);
  let snapshot: Record<string, unknown> | undefined;
  let done = false;
  let cut = false;
  // message_start's output_tokens is a placeholder; the count is final once a message_delta reports it.
  let outputFinal = false;
  let chars = 0;
  let error: string | undefined;
  return {
    frame(f: SseFrame): FrameVerdict {
      if (f.event === 'content_block_delta') { chars += deltaChars(f.data); return 'pass'; }
      if (f.event !== undefined && !READ.has(f.event)) return 'pass';
      if (f.event === 'message_stop') { done = true; return 'pass'; }
      const event = parseObject(f.data);
      if (!event) return 'pass';
      switch (event.type ?? f.event) {
        case 'message_start': {
          const message = event.message as Record<string, any> | undefined;
          snapshot = { ...message?.usage };
          if (rewrite === undefined || typeof message?.model !== 'string') return 'pass';
          message.model = rewrite;
          return { replace: formatFrame(JSON.stringify(event), f.event) };
        }
        case 'message_delta':
          if (event.usage && typeof event.usage === 'object') {
            overwriteUsage(snapshot ??= {}, event.usage);
            if (typeof event.usage.output_tokens === 'number') outputFinal = true;
          }
          if (event.delta?.stop_reason === 'max_tokens') cut = true;
          return 'pass';
        case 'content_block_delta':
          chars += deltaChars(f.data);
          return 'pass';
        case 'message_stop':
          done = true;
          return 'pass';
        case 'error':
          error = String(event.error?.message ?? 'upstream stream error');
          return 'pass';
        default:
          return 'pass';
      }
    },
    usage: () => anthropicUsage(snapshot),
    terminal: () => done,
    error: () => error,
    incomplete: () => cut,
    started: () => chars > 0,
    streamed: () => ({ chars, outputFinal }),
  };
}
