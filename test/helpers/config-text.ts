// Config tests' helpers: where a problem about some text of a file must point, and the problems of a refused config.
import { ConfigError } from '../../core/config.ts';

/** "LINE:COL" (1-based) of the nth occurrence of needle in text: where a problem about that text must point. */
export function pos(text: string, needle: string, nth = 1): string {
  let at = -1;
  for (let i = 0; i < nth; i++) {
    at = text.indexOf(needle, at + 1);
    if (at === -1) throw new Error(`"${needle}" occurs fewer than ${nth} times`);
  }
  const before = text.slice(0, at).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** The problems of a config that must be refused (throws when it is accepted or fails otherwise). */
export function refused(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError, the config was accepted');
}
