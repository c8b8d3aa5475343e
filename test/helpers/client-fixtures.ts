// The real requests of Claude Code, Codex CLI and Gemini CLI, recorded as they reached an upstream (credentials replaced),
// from the shared reference folder beside the repository (../shared/fixtures/clients, as CI lays it out).
import { readFileSync } from 'node:fs';

export const CLIENT_FIXTURES = new URL('../../../shared/fixtures/clients/', import.meta.url);

export interface ClientFixture { method: string; url: string; headers: Record<string, string>; body: Record<string, unknown> }

/** A recorded request, with the recorder's "<N more items of the same kind>" list markers taken out. */
export function clientFixture(name: string): ClientFixture {
  const raw = JSON.parse(readFileSync(new URL(name, CLIENT_FIXTURES), 'utf8'));
  const dropMarkers = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.filter((v) => !(typeof v === 'string' && /^<\d+ more items of the same kind>$/.test(v))).map(dropMarkers);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, dropMarkers(v)]));
    return value;
  };
  // Transport headers described the original body; the vendor and client headers are kept.
  const headers = Object.fromEntries(Object.entries(raw.headers as Record<string, string>).filter(([k]) => !['content-length', 'connection', 'accept-encoding', 'host'].includes(k)));
  return { method: raw.method, url: raw.url, headers, body: dropMarkers(raw.body) as Record<string, unknown> };
}
