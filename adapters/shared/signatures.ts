// Opaque provider data (canonical Signed) on its way through a client of another format: a Gemini thoughtSignature in an
// Anthropic client's thinking signature, Anthropic thinking in a Responses client's encrypted_content. The client echoes
// the field back untouched, and the value comes home with the name of the format that made it.
import type { CanonBlock, ReasoningBlock, Signed } from '../../core/canonical.ts';

const PREFIX = 'gw1:';

/** The field's value for a client of `clientFormat`: the raw value when the client's own format made it, else wrapped. */
export function wrapSigned(signed: Signed, clientFormat: string): string {
  return signed.format === clientFormat ? signed.value : `${PREFIX}${signed.format}:${signed.value}`;
}

/** What a client of `clientFormat` sent back: a wrapped value names its format; anything else is the client format's own. */
export function unwrapSigned(raw: string, clientFormat: string): Signed {
  if (raw.startsWith(PREFIX)) {
    const colon = raw.indexOf(':', PREFIX.length);
    if (colon > PREFIX.length) return { format: raw.slice(PREFIX.length, colon), value: raw.slice(colon + 1) };
  }
  return { format: clientFormat, value: raw };
}

/** The value to send to an upstream of `format`, or undefined when another format made it (it is dropped, never sent). */
export const signedFor = (signed: Signed | undefined, format: string): string | undefined =>
  signed?.format === format ? signed.value : undefined;

/**
 * An answer's blocks for a client whose format has no signature field on a tool call (Anthropic, Responses): a call's
 * signature rides in a reasoning block with no text right before it, which the client echoes back in place, and which
 * the upstream's encoder puts back on the call (Gemini: a signature-only thought joins the part after it).
 */
export function withCallCarriers(blocks: CanonBlock[]): CanonBlock[] {
  if (!blocks.some((b) => b.type === 'tool_call' && b.signature)) return blocks;
  return blocks.flatMap((b) => (b.type === 'tool_call' && b.signature ? [callCarrier(b.signature), b] : [b]));
}

/** The reasoning block that carries a tool call's signature. */
export const callCarrier = (signature: Signed): ReasoningBlock => ({ type: 'reasoning', text: '', signature });
