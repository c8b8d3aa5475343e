// The list of wire-format adapters (read only by core/registry.ts).
import type { FormatAdapter } from '../core/types.ts';
import { openaiChat } from './openai-chat/index.ts';

export { upstreamAuth } from './shared/upstream-auth.ts';

export const formats: FormatAdapter[] = [openaiChat];
