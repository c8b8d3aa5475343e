// A canonical answer → the Response object a Responses client gets from a non-streamed create, and the count answer.
import type { Codec } from '../../../core/canonical.ts';
import { withCallCarriers } from '../../shared/signatures.ts';
import { encodeUsage, itemIdFor, outputItem, responseIdOf, responseObject, wantsEncrypted } from './response-object.ts';
import type { Obj } from './read.ts';
import { STATUS_BY_STOP } from './tables.ts';

export const encodeResponse: Codec['encodeResponse'] = (res, ctx) => {
  const id = responseIdOf(ctx);
  const encrypted = wantsEncrypted(ctx);
  const output: Obj[] = [];
  // A call's signature rides in a reasoning item's encrypted_content before it, for a client that replays those.
  for (const block of encrypted ? withCallCarriers(res.content) : res.content) {
    const item = outputItem(block, itemIdFor(block, id, output.length), encrypted);
    if (item) output.push(item);
  }
  const { status, reason } = STATUS_BY_STOP[res.stop];
  return responseObject(ctx, {
    id, createdAt: res.created ?? Math.floor(Date.now() / 1000), status, output, usage: encodeUsage(res.usage),
    ...(reason ? { incompleteReason: reason } : {}),
  });
};

/** The input_tokens answer; a local estimate says so, since OpenAI's shape has no such mark. */
export const encodeCount: Codec['encodeCount'] = (count) =>
  ({ object: 'response.input_tokens', input_tokens: count.inputTokens, ...(count.estimated ? { estimated: true } : {}) });
