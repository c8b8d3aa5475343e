// A local estimate of a prompt's input tokens, for count_tokens requests whose upstream format has no counter and for
// metering a stream the client left before the upstream reported its prompt: about four characters of text per token
// (the rule of thumb the vendors publish), a flat share per image or file. The answer or record says it is an estimate.
import type { CanonBlock, CanonRequest } from '../../core/canonical.ts';

const CHARS_PER_TOKEN = 4;
/** What one image or file is taken to cost (a mid-sized image in the vendors' own tables). */
const MEDIA_TOKENS = 768;

function blockChars(b: CanonBlock): { chars: number; media: number } {
  switch (b.type) {
    case 'text': case 'reasoning': return { chars: b.text.length, media: 0 };
    case 'tool_call': return { chars: b.name.length + b.arguments.length, media: 0 };
    case 'tool_result': {
      let chars = 0;
      let media = 0;
      for (const c of b.content) { const n = blockChars(c); chars += n.chars; media += n.media; }
      return { chars, media };
    }
    case 'image': case 'file': return { chars: 0, media: 1 };
  }
}

export function estimateInputTokens(req: CanonRequest): number {
  let chars = 0;
  let media = 0;
  for (const b of req.system) chars += b.text.length;
  for (const m of req.messages) for (const b of m.content) { const n = blockChars(b); chars += n.chars; media += n.media; }
  for (const t of req.tools) chars += JSON.stringify(t).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + media * MEDIA_TOKENS;
}
