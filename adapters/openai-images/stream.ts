// OpenAI image streams: usage on the `*.completed` event (image_generation.* or image_edit.*), `error` events as failure.
import type { FrameVerdict, SseFrame, StreamScanner } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { openaiTokenUsage } from '../shared/openai-usage.ts';
import { hasErrorKey, hasUsageKey, parseObject } from '../shared/stream-json.ts';

// Partial images are large base64 frames: they are recognised by name (or, without an event line, by lacking these keys) and never parsed.
const mayMatter = (f: SseFrame): boolean => f.event !== undefined
  ? f.event === 'error' || f.event.endsWith('.completed')
  : hasUsageKey(f.data) || hasErrorKey(f.data) || f.data.includes('.completed"');

export function scanImagesStream(): StreamScanner {
  let usage: Usage | undefined;
  let done = false;
  let error: string | undefined;
  return {
    frame(f: SseFrame): FrameVerdict {
      if (!mayMatter(f)) return 'pass';
      const event = parseObject(f.data);
      if (!event) return 'pass';
      const type = typeof event.type === 'string' ? event.type : f.event;
      if (type === 'error' || (event.error && typeof event.error === 'object')) {
        error = String(event.error?.message ?? event.message ?? 'upstream stream error');
      } else if (type?.endsWith('.completed')) {
        done = true;
        // Each completed event reports its usage whole; the last one seen is kept, as for every other format.
        usage = openaiTokenUsage(event.usage) ?? usage;
      }
      return 'pass';
    },
    usage: () => usage,
    terminal: () => done,
    error: () => error,
  };
}
