// Call ids for a format that may have none: Gemini 2.5 sends functionCall without an id, so decoders mint `call_<n>`,
// skipping every id the conversation already holds, so ids stay unique across turns without state (docs/translation.md).
import type { CanonRequest } from '../../../core/canonical.ts';

export interface IdMinter { next(): string }

/** Ids `call_1`, `call_2`, … that none of `taken` (the conversation's calls so far) already uses. */
export function idMinter(taken: Iterable<string> = []): IdMinter {
  const used = new Set(taken);
  let n = 0;
  return {
    next() {
      let id: string;
      do id = `call_${++n}`; while (used.has(id));
      used.add(id);
      return id;
    },
  };
}

/** Every call id the request's history holds (calls and the results that answer them). */
export function callIdsOf(request: CanonRequest | undefined): string[] {
  const ids: string[] = [];
  for (const message of request?.messages ?? []) {
    for (const block of message.content) {
      if (block.type === 'tool_call') ids.push(block.id);
      else if (block.type === 'tool_result') ids.push(block.callId);
    }
  }
  return ids;
}
