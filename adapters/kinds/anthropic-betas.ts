// The Anthropic beta flags a cloud serving Claude accepts. Bedrock refuses a request naming one it does not know with
// 400 "invalid beta flag", Vertex with 400 "Unexpected value(s) `x` for the `anthropic-beta` header", while Claude Code
// (which believes it talks to Anthropic) sends Anthropic's own, some named differently on the clouds. A kind passes on
// the client's flags renamed and filtered by these tables; a platform's `anthropic_betas` replaces the list.

/** Anthropic API names → the clouds' names for the same feature (Claude Code asks tool search this way of Anthropic). */
export const CLOUD_BETA_NAMES: Record<string, string> = {
  'advanced-tool-use-2025-11-20': 'tool-search-tool-2025-10-19',
};

const COMMON = [
  'claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'context-1m-2025-08-07',
  'computer-use-2025-01-24', 'computer-use-2025-11-24', 'tool-search-tool-2025-10-19', 'compact-2026-01-12',
  'thinking-binding-controls-2026-08-01', 'thinking-display-updates-2026-08-18', 'dangerous-tool-use-2026-09-03',
];

/** What Bedrock's runtime (InvokeModel) accepts in a Claude body's anthropic_beta. */
export const BEDROCK_BETAS: readonly string[] = [
  ...COMMON, 'effort-2025-11-24', 'tool-examples-2025-10-29', 'token-efficient-tools-2025-02-19', 'output-128k-2025-02-19',
  'fine-grained-tool-streaming-2025-05-14', 'structured-outputs-2025-12-15', 'mid-conversation-output-config-2026-07-01',
  'mid-conversation-tool-changes-2026-07-01',
];

/** What Vertex AI's Claude endpoints accept in the anthropic-beta header (its count-tokens endpoint takes none). */
export const VERTEX_BETAS: readonly string[] = [...COMMON, 'compact-2026-09-04', 'per-turn-control-2026-07-01', 'web-search-2025-03-05'];

/** The flags of an anthropic-beta header (or several) or an anthropic_beta list, trimmed, in order. */
export function betaList(value: unknown): string[] {
  const parts = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return parts.flatMap((v) => String(v).split(',')).map((b) => b.trim()).filter(Boolean);
}

/** The client's flags as the cloud takes them: renamed, only those `allowed`, each once. */
export function cloudBetas(flags: string[], allowed: readonly string[]): string[] {
  const out: string[] = [];
  for (const flag of flags) {
    const name = CLOUD_BETA_NAMES[flag] ?? flag;
    if (allowed.includes(name) && !out.includes(name)) out.push(name);
  }
  return out;
}

/** The option schema both kinds take for their list. */
export const betasOption = (cloud: string, defaults: readonly string[]) => ({
  type: 'array', items: { type: 'string', pattern: '^[a-z0-9_-]+$' }, default: [...defaults],
  description: `${cloud}: the anthropic-beta flags passed on to Claude (others the client sends are dropped, as the cloud refuses the whole request for one it does not know; advanced-tool-use-2025-11-20 is renamed tool-search-tool-2025-10-19 first). Default: the flags the cloud is known to accept.`,
});
