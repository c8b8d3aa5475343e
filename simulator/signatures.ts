// Reasoning signatures each simulated vendor mints with a secret of its own and checks when a client replays them.
//
// A signature is base64(nonce ‖ HMAC-SHA256(vendor key, nonce ‖ text)); a sealed token also carries the text after the MAC,
// as OpenAI's encrypted_content and Gemini's thoughtSignature carry their reasoning. A token minted under one vendor's key
// never verifies under another's, which is how a translation test proves one provider's signature never reaches another.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type Signer = 'anthropic' | 'openai' | 'gemini';

// Fixed per vendor, so a signature minted by one simulator verifies on another (a gateway may fail over between them).
const keys: Record<Signer, Buffer> = {
  anthropic: createHash('sha256').update('simulator: anthropic thinking signatures').digest(),
  openai: createHash('sha256').update('simulator: openai reasoning encrypted_content').digest(),
  gemini: createHash('sha256').update('simulator: gemini thought signatures').digest(),
};

const NONCE = 16;
const MAC = 32;

function mac(signer: Signer, nonce: Buffer, text: string): Buffer {
  return createHmac('sha256', keys[signer]).update(nonce).update(text, 'utf8').digest();
}

/** A signature over `text`, which the client replays beside the text. */
export function sign(signer: Signer, text: string): string {
  const nonce = randomBytes(NONCE);
  return Buffer.concat([nonce, mac(signer, nonce, text)]).toString('base64');
}

export function verify(signer: Signer, text: string, signature: unknown): boolean {
  const raw = decode(signature);
  if (raw?.length !== NONCE + MAC) return false;
  return timingSafeEqual(raw.subarray(NONCE), mac(signer, raw.subarray(0, NONCE), text));
}

/** A token carrying `text` itself, for formats whose clients replay only the opaque token. */
export function seal(signer: Signer, text: string): string {
  const nonce = randomBytes(NONCE);
  return Buffer.concat([nonce, mac(signer, nonce, text), Buffer.from(text, 'utf8')]).toString('base64');
}

/** The text a token minted by `signer` carries, or undefined when it was minted elsewhere or altered. */
export function unseal(signer: Signer, token: unknown): string | undefined {
  const raw = decode(token);
  if (!raw || raw.length < NONCE + MAC) return undefined;
  const text = raw.subarray(NONCE + MAC).toString('utf8');
  return timingSafeEqual(raw.subarray(NONCE, NONCE + MAC), mac(signer, raw.subarray(0, NONCE), text)) ? text : undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes of a standard base64 string, or undefined for anything else (Buffer.from would skip bad characters silently). */
export function decode(token: unknown): Buffer | undefined {
  if (typeof token !== 'string' || token.length % 4 !== 0 || !BASE64.test(token)) return undefined;
  return Buffer.from(token, 'base64');
}
