// What any store keeps of a client's conversation (Store.putConversation): the ids it may name and the largest value.
/** Ids a client may name: what the gateway mints (resp_<hex>) and nothing that could shape a store key oddly. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Largest conversation kept (a long agent session with its tool output); a larger one is refused, not truncated. */
export const CONVERSATION_MAX_BYTES = 16 * 1024 * 1024;

/** Refuses what no store may keep: an id outside CONVERSATION_ID, a value over CONVERSATION_MAX_BYTES. */
export function checkConversation(responseId: string, value: string): void {
  if (!CONVERSATION_ID.test(responseId)) throw new RangeError('conversation id must match [A-Za-z0-9_-]{1,128}');
  if (Buffer.byteLength(value) > CONVERSATION_MAX_BYTES) throw new RangeError(`conversation larger than ${CONVERSATION_MAX_BYTES} bytes`);
}
