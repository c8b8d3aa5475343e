// What any store keeps of a tool call's signature (Store.putSignature): the names it may go by and the largest value.
import { CONVERSATION_ID } from './conversations.ts';

/** The names: the bridge's digests of a call, and nothing that could shape a store key oddly. */
export const SIGNATURE_ID = CONVERSATION_ID;
/** Largest signature kept (an upstream's call signature runs to a few KiB); a larger one is refused. */
export const SIGNATURE_MAX_BYTES = 64 * 1024;
/** Signatures one process's memory keeps at most (the oldest go first). */
export const SIGNATURES_KEPT = 50_000;

/** Refuses what no store may keep: a name outside SIGNATURE_ID, a value over SIGNATURE_MAX_BYTES. */
export function checkSignature(name: string, value: string): void {
  if (!SIGNATURE_ID.test(name)) throw new RangeError('signature name must match [A-Za-z0-9_-]{1,128}');
  if (Buffer.byteLength(value) > SIGNATURE_MAX_BYTES) throw new RangeError(`signature larger than ${SIGNATURE_MAX_BYTES} bytes`);
}
