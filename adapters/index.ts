// The list of wire-format adapters (read only by app/registry.ts).
import type { FormatAdapter } from '../core/types.ts';
import { openaiChat } from './openai-chat/index.ts';
import { openaiResponses } from './openai-responses/index.ts';
import { anthropicMessages } from './anthropic-messages/index.ts';
import { gemini } from './gemini/index.ts';
import { openaiImages } from './openai-images/index.ts';
import { openaiEmbeddings } from './openai-embeddings/index.ts';
import { gatewayFormat } from './gateway/index.ts';

export { upstreamAuth } from './shared/upstream-auth.ts';
export { kinds } from './kinds/index.ts';
export { credentialSources } from './credentials/index.ts';

export const formats: FormatAdapter[] = [openaiChat, openaiResponses, anthropicMessages, gemini, openaiImages, openaiEmbeddings, gatewayFormat];
