// Reasoning items ↔ canonical reasoning blocks. The summary is the text; encrypted_content carries the block's
// signature: OpenAI's own raw, another provider's wrapped (gw1:…) so only that provider ever gets it back.
import type { ReasoningBlock, Signed } from '../../../core/canonical.ts';
import { signedFor, unwrapSigned, wrapSigned } from '../../shared/signatures.ts';
import { FORMAT } from './tables.ts';
import { isObj, type Obj } from './read.ts';

// Anthropic's redacted_thinking has no field of its own in Responses: it rides in encrypted_content under its format's
// name with this suffix, so that it comes home as `redacted`, not as a thinking signature.
const REDACTED = '+redacted';

const texts = (list: unknown, type: string): string[] =>
  Array.isArray(list) ? list.filter((p) => isObj(p) && p.type === type && typeof p.text === 'string').map((p) => (p as Obj).text as string) : [];

/** The text a reasoning item shows: its summary parts, else its raw reasoning_text content (open-weight models). */
export function reasoningText(item: Obj): string {
  const summary = texts(item.summary, 'summary_text');
  return (summary.length > 0 ? summary : texts(item.content, 'reasoning_text')).join('\n\n');
}

/** A reasoning item (a client's replay, or an upstream's output) → canonical block. */
export function reasoningBlockOf(item: Obj): ReasoningBlock {
  const block: ReasoningBlock = { type: 'reasoning', text: reasoningText(item) };
  if (typeof item.encrypted_content === 'string' && item.encrypted_content !== '') {
    const signed = unwrapSigned(item.encrypted_content, FORMAT);
    if (signed.format.endsWith(REDACTED)) block.redacted = { format: signed.format.slice(0, -REDACTED.length), value: signed.value };
    else block.signature = signed;
  }
  if (typeof item.id === 'string' && item.id !== '') block.id = { format: FORMAT, value: item.id };
  return block;
}

/** What a Responses client gets in encrypted_content for a block: its signature (or redacted data), wrapped if foreign. */
export function encryptedFor(block: ReasoningBlock): string | undefined {
  const signed: Signed | undefined = block.signature
    ?? (block.redacted ? { format: `${block.redacted.format}${REDACTED}`, value: block.redacted.value } : undefined);
  return signed ? wrapSigned(signed, FORMAT) : undefined;
}

export const summaryOf = (text: string) => (text === '' ? [] : [{ type: 'summary_text', text }]);

/** A reasoning block as an OpenAI upstream takes it back, or undefined when OpenAI did not make it (dropped). */
export function upstreamReasoningItem(block: ReasoningBlock): Obj | undefined {
  const encrypted = signedFor(block.signature, FORMAT);
  if (encrypted === undefined) return undefined;
  const id = signedFor(block.id, FORMAT);
  return { type: 'reasoning', ...(id ? { id } : {}), summary: summaryOf(block.text), encrypted_content: encrypted };
}
