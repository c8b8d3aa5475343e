// Helpers the stream scanners share: which model name to write back to the client, and a tolerant parse of one frame's JSON.
import type { Ctx } from '../../core/types.ts';

/** The client's model name when an alias was applied upstream (so responses must be rewritten), else undefined. */
export const clientModelRewrite = (ctx: Ctx): string | undefined =>
  ctx.model !== undefined && ctx.upstreamModel !== undefined && ctx.model !== ctx.upstreamModel ? ctx.model : undefined;

/** A frame's data as a JSON object, or undefined when it is not one (upstream noise must never break the relay). */
export function parseObject(data: string): Record<string, any> | undefined {
  if (data === '') return undefined;
  try {
    const value = JSON.parse(data);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A test for `"name"` in a frame's JSON text (a key: inside strings quotes are escaped). It runs on every frame, and
 * String.prototype.includes scans for its needle's first character, which in JSON text is a quote at every other
 * field: the name with its closing quote is looked for first (docs/performance.md), the quoted name only in text that
 * has it.
 */
export function jsonKey(name: string): (text: string) => boolean {
  const named = `${name}"`;
  const quoted = `"${name}"`;
  return (text) => text.includes(named) && text.includes(quoted);
}

/** The keys most scanners look for in every frame. */
export const hasUsageKey = jsonKey('usage');
export const hasErrorKey = jsonKey('error');

/**
 * Counts the characters of every JSON string value named by one of `keys` in a frame's JSON text, without parsing the
 * frame (it runs on every content delta): one precompiled regular expression, escapes decoded only when present.
 * An unescaped `"key"` can only be a real key: quotes inside strings are escaped.
 */
export function textCounter(keys: readonly string[]): (data: string) => number {
  const field = new RegExp(`"(?:${keys.join('|')})"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'g');
  return (data) => {
    let chars = 0;
    field.lastIndex = 0;
    for (let m = field.exec(data); m !== null; m = field.exec(data)) {
      const value = m[1];
      if (!value.includes('\\')) chars += value.length;
      else {
        try { chars += (JSON.parse(`"${value}"`) as string).length; } catch { chars += value.length; }
      }
    }
    return chars;
  };
}
