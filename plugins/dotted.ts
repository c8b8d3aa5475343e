// The one reader of a dotted path in a request body ("generationConfig.maxOutputTokens", "messages.0"), for the stages
// that take field paths as options (session fields, output caps).

/**
 * The value at a dotted path; a numeric segment indexes an array, and on anything else stands for the value itself
 * (a Responses `input` given as a string is its own first item).
 */
export function dig(body: unknown, path: string): unknown {
  let v = body;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return /^\d+$/.test(k) && typeof v === 'string' ? v : undefined;
    v = Array.isArray(v) ? (/^\d+$/.test(k) ? v[Number(k)] : undefined) : (v as Record<string, unknown>)[k];
  }
  return v;
}
