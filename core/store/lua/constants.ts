// Numbers the Lua scripts read by name: the rules' constants, taken from where the embedded store reads them, and the
// lives of Redis's limit keys. index.ts writes each value where its name stands as a script is loaded (no argument per call).
import { PASS_STRIDE } from '../rules/accounts.ts';
import { CONCURRENCY_RETRY_MS, HELD_RETRY_MS, HOLD_MINUTES, MINUTE_MS, RATE_KEPT_SECONDS, RPM_WINDOW_MS, WINDOWS } from '../units.ts';

const windowMs = (name: (typeof WINDOWS)[number]['window']): number => WINDOWS.find((w) => w.window === name)!.ms;

export const LUA_CONSTANTS: Readonly<Record<string, number>> = {
  MINUTE_MS,
  RPM_WINDOW_MS,
  HOLD_MINUTES,
  CONCURRENCY_RETRY_MS,
  HELD_RETRY_MS,
  PASS_STRIDE,
  WINDOW_5H_MS: windowMs('5h'),
  WINDOW_1D_MS: windowMs('1d'),
  WINDOW_7D_MS: windowMs('7d'),
  /** A key's per-second counts (rate.ts) live as long as the embedded store keeps them. */
  RATE_KEEP_MS: RATE_KEPT_SECONDS * 1000,
  /** A lease zset outlives its latest lease by a minute: a heartbeat a little late still finds it. */
  LEASE_KEEP_MS: MINUTE_MS,
  /** A key's rpm zset lives two windows past its last admission (its entries leave after one). */
  RPM_KEEP_MS: 2 * RPM_WINDOW_MS,
  /** A minute's tpm bucket lives three minutes: the checks of its minute, and settlements that correct it after. */
  TPM_KEEP_MS: 3 * MINUTE_MS,
};

const NAMES = new RegExp(`\\b(?:${Object.keys(LUA_CONSTANTS).join('|')})\\b`, 'g');

/** A script's text with each constant's name replaced by its value (an integer, as Lua reads it). */
export function withConstants(source: string): string {
  return source.replace(NAMES, (name) => String(LUA_CONSTANTS[name]));
}
