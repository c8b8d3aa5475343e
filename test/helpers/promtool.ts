// promtool (Debian package prometheus) for the deploy tests: skipped where it is missing, required in CI (.ci/run installs it).
import { spawnSync } from 'node:child_process';
import type { Test } from 'tap';

/** True when promtool runs here; otherwise the test ends as skipped, or failed in CI. Call it before any assertion. */
export function havePromtool(t: Test): boolean {
  if (!spawnSync('promtool', ['--version']).error) return true;
  if (process.env.CI) t.fail('promtool is missing: CI must install the prometheus package (see .ci/run)');
  else t.plan(0, 'promtool not found: install the Debian package prometheus to run this check');
  return false;
}

export const promtool = (args: string[], cwd?: string) => spawnSync('promtool', args, { encoding: 'utf8', cwd, timeout: 60_000 });
