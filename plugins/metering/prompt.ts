// A prompt's tokens when the upstream never reported them (a stream the client left first): count_tokens' estimate of
// the client's own request, or its bytes at four a token when the format's codec cannot read it.
import { estimateInputTokens } from '../../adapters/shared/estimate.ts';
import type { Ctx } from '../../core/types.ts';

const BYTES_PER_TOKEN = 4;

export async function promptEstimate(ctx: Ctx): Promise<number> {
  const { codec, jsonBody } = ctx.format;
  if (codec && jsonBody) {
    try {
      const request = codec.decodeRequest(await ctx.json(), 'generate', { model: ctx.upstreamModel ?? ctx.model ?? '', path: ctx.path, query: ctx.search });
      return estimateInputTokens(request);
    } catch { /* a request the codec would not translate may still be relayed natively: its size stands in */ }
  }
  return Math.ceil((await ctx.body()).length / BYTES_PER_TOKEN);
}
