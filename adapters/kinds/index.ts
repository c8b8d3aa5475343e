// The list of upstream kinds (read only by app/registry.ts): platforms.*.kind names one.
import type { UpstreamKind } from '../../core/types.ts';
import { azureOpenai } from './azure-openai.ts';
import { bedrock } from './bedrock.ts';
import { openaiCompatible } from './openai-compatible.ts';
import { vertex } from './vertex.ts';

export const kinds: UpstreamKind[] = [azureOpenai, openaiCompatible, vertex, bedrock];
