// data: URLs (RFC 2397) ↔ canonical base64 media, for the formats that carry inline bytes as URLs (chat image_url and
// file_data, Responses input_image and input_file). Only base64 data URLs count: the canonical model keeps inline media
// as base64.
import type { MediaSource } from '../../core/canonical.ts';

const DATA_URL = /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?((?:;[a-z0-9_.+-]+=[^;,]*)*);base64,(.*)$/is;

/** The media type and base64 data of a base64 data URL, or undefined when `url` is not one. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = DATA_URL.exec(url);
  if (!m) return undefined;
  return { mediaType: (m[1] ?? 'application/octet-stream').toLowerCase(), data: m[3] };
}

export const toDataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`;

/** An image or file URL as a canonical source: inline bytes for a data URL, a reference otherwise. */
export function sourceOfUrl(url: string): MediaSource {
  const inline = parseDataUrl(url);
  return inline ? { kind: 'base64', ...inline } : { kind: 'url', url };
}
