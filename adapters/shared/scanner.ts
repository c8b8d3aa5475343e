// The skeleton every stream scanner shares: whether the stream ended (its terminal event), was cut by the output cap,
// failed with an error event, and how much answer text it relayed. A format's scanner extends it with its frame() and
// usage(); one class per format keeps a request's scanner free of per-request closures.
import type { FrameVerdict, SseFrame, StreamScanner, StreamedText } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';

export abstract class Scanner implements StreamScanner {
  /** The format's terminal event was seen. */
  protected done = false;
  /** The stream said the answer was cut by its output cap. */
  protected cut = false;
  /** Characters of answer text (content, reasoning, tool arguments) relayed so far. */
  protected chars = 0;
  /** The message of an error the upstream reported inside the stream. */
  protected failure: string | undefined = undefined;

  abstract frame(frame: SseFrame): FrameVerdict;
  abstract usage(): Usage | undefined;
  /** True once usage() holds the upstream's final output count (no later frame will change it). */
  protected abstract outputFinal(): boolean;

  terminal(): boolean { return this.done; }
  error(): string | undefined { return this.failure; }
  incomplete(): boolean { return this.cut; }
  started(): boolean { return this.chars > 0; }
  streamed(): StreamedText { return { chars: this.chars, outputFinal: this.outputFinal() }; }
}
