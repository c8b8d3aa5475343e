// Deterministic embedding vectors: the same text (and size) always gives the same unit vector, so tests can compare them.
import { createHash } from 'node:crypto';

/** Default length of a vector when the request names none (real models use hundreds; tests need few). */
export const DEFAULT_DIMENSIONS = 8;
export const MAX_DIMENSIONS = 3072;

/** A unit vector of `dimensions` components derived from the text's SHA-256 (extended by counter blocks). */
export function vectorOf(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && raw.length < dimensions; i += 2) raw.push(digest.readUInt16LE(i) / 32767.5 - 1);
  }
  const norm = Math.hypot(...raw) || 1;
  return raw.map((v) => Math.round((v / norm) * 1e6) / 1e6);
}

/** A vector as OpenAI's base64 encoding sends it: little-endian float32s. */
export function base64Of(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}
