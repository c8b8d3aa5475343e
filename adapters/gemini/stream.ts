// Gemini streams (data-only frames, no terminal event): usage from the last usageMetadata, the end at a finishReason, error objects as failure.
import type { Ctx, FrameVerdict, SseFrame, StreamScanner } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { Scanner } from '../shared/scanner.ts';
import { formatFrame } from '../shared/sse.ts';
import { clientModelRewrite, hasErrorKey, jsonKey, parseObject, textCounter } from '../shared/stream-json.ts';
import { geminiUsage } from './usage.ts';

/** Google frames end in \r\n\r\n; a rewritten frame keeps the line ends of the one it replaces. */
export const geminiFrame = (data: string, crlf = true): string => {
  const frame = formatFrame(data);
  return crlf ? frame.replace(/\n/g, '\r\n') : frame;
};

const hasFinishReason = (chunk: Record<string, any>): boolean =>
  Array.isArray(chunk.candidates) && chunk.candidates.some((c: any) => typeof c?.finishReason === 'string' && c.finishReason !== '');

/** The answer was cut by generationConfig.maxOutputTokens (a body, or the chunks of a JSON-array stream). */
export const cutByCap = (json: unknown): boolean => (Array.isArray(json) ? json : [json]).some((chunk) =>
  Array.isArray(chunk?.candidates) && chunk.candidates.some((c: any) => c?.finishReason === 'MAX_TOKENS'));

// Parts' text (thoughts included: they are output too).
const partChars = textCounter(['text']);
const hasUsageMetadataKey = jsonKey('usageMetadata');
const hasFinishKey = jsonKey('finishReason');

class GeminiScanner extends Scanner {
  readonly #rewrite: string | undefined;
  // Usage appears on almost every chunk and only the last counts: keep its text and parse it once, at the end.
  #lastUsageData: string | undefined = undefined;

  constructor(ctx: Ctx) {
    super();
    this.#rewrite = clientModelRewrite(ctx);
  }

  frame(f: SseFrame): FrameVerdict {
    const data = f.data;
    if (hasUsageMetadataKey(data)) this.#lastUsageData = data;
    this.chars += partChars(data);
    // An unescaped quoted key can only be a JSON key (inside strings quotes are escaped), so these tests are exact enough to skip parsing.
    const finish = hasFinishKey(data);
    const failed = hasErrorKey(data);
    if (!finish && !failed && this.#rewrite === undefined) return 'pass';
    const chunk = parseObject(data);
    if (!chunk) return 'pass';
    if (chunk.error && typeof chunk.error === 'object') this.failure = String(chunk.error.message ?? 'upstream stream error');
    if (finish && hasFinishReason(chunk)) {
      this.done = true;
      this.cut = cutByCap(chunk);
    }
    if (this.#rewrite === undefined || typeof chunk.modelVersion !== 'string') return 'pass';
    chunk.modelVersion = this.#rewrite;
    return { replace: geminiFrame(JSON.stringify(chunk), f.raw.endsWith('\r\n')) };
  }

  usage(): Usage | undefined {
    const chunk = this.#lastUsageData === undefined ? undefined : parseObject(this.#lastUsageData);
    return geminiUsage(chunk?.usageMetadata);
  }

  // Every chunk carries provisional usage; the one with the finishReason carries the final count.
  protected outputFinal(): boolean { return this.done; }
}

/**
 * Gemini streams end when the connection closes, with no marker. The chunk that carries a candidate's finishReason is the
 * last one with content (it also carries the final usage), so terminal() is true from then on: a stream cut before it is
 * reported as cut, one cut after it lost nothing. Both SDKs treat finishReason the same way.
 */
export const scanGeminiStream = (ctx: Ctx): StreamScanner => new GeminiScanner(ctx);
