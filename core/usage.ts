// The canonical usage record every format's usage is normalised into (docs/wire-formats.md#usage).
export interface Usage {
  /** All input tokens, cache reads and writes included. */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  /** Of cacheWrite, the tokens cached for an hour (where a format reports them apart), which cost more than shorter-lived ones. */
  cacheWrite1h?: number;
  /** All output tokens, reasoning included. */
  output: number;
  reasoning: number;
}

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
