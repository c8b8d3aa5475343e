// Canonical answer blocks → the parts a Gemini client reads: text, thoughts (thought: true), function calls with args
// objects and ids, inline media; signatures of any format travel in thoughtSignature (wrapped when not Gemini's own).
import type { CanonBlock, Signed } from '../../../core/canonical.ts';
import { wrapSigned } from '../../shared/signatures.ts';
import type { Obj } from './read.ts';
import { FORMAT } from './tables.ts';

const signed = (part: Obj, signature: Signed | undefined): Obj =>
  (signature ? { ...part, thoughtSignature: wrapSigned(signature, FORMAT) } : part);

/** A call's arguments as Gemini's args object: text that is not a JSON object becomes {} (a freeform call's is {input}). */
export function argsObject(args: string, custom?: boolean): Obj {
  if (custom) return { input: args };
  try {
    const value = JSON.parse(args);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** One block as a part; undefined for what a Gemini client cannot hold (redacted reasoning, a tool result). */
export function partOf(block: CanonBlock): Obj | undefined {
  switch (block.type) {
    case 'text':
      return signed({ text: block.text }, block.signature);
    case 'reasoning':
      // Redacted reasoning has no text to show and no field to ride in: it stays behind.
      return block.text === '' && !block.signature ? undefined : signed({ text: block.text, thought: true }, block.signature);
    case 'tool_call':
      return signed({ functionCall: { id: block.id, name: block.name, args: argsObject(block.arguments, block.custom) } }, block.signature);
    case 'image':
    case 'file':
      if (block.source.kind === 'base64') return { inlineData: { mimeType: block.source.mediaType, data: block.source.data } };
      if (block.source.kind === 'url') return { fileData: { fileUri: block.source.url } };
      return { fileData: { fileUri: block.source.id, ...(block.source.mediaType ? { mimeType: block.source.mediaType } : {}) } };
    default:
      return undefined;
  }
}
