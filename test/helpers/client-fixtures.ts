// The real requests of Claude Code, Codex CLI and Gemini CLI, recorded as they reached an upstream (credentials replaced)
// by `npm run record-clients` into test/fixtures/clients/, one file per client named <client>-<version>.json.
import { readdirSync, readFileSync } from 'node:fs';

export const CLIENT_FIXTURES = new URL('../fixtures/clients/', import.meta.url);

/** claude-code-default is Claude Code run with its default model (no --model), a recording of its own. */
export type RecordedClient = 'claude-code' | 'claude-code-default' | 'codex-cli' | 'gemini-cli';

export interface ClientFixture { method: string; url: string; headers: Record<string, string>; body: Record<string, unknown> }

/**
 * The file of a client's recording, e.g. codex-cli-0.171.0.json: whichever version was recorded last. The version
 * starts with a digit, so claude-code-default-2.1.330.json is never claude-code's.
 */
export function fixtureFile(client: RecordedClient): string {
  const files = readdirSync(CLIENT_FIXTURES).filter((f) => new RegExp(`^${client}-\\d[\\w.-]*\\.json$`).test(f));
  if (files.length !== 1) throw new Error(`expected one recording of ${client} in test/fixtures/clients, found ${files.length}`);
  return files[0];
}

/** The version a client's recording was made with. */
export const fixtureVersion = (client: RecordedClient): string => fixtureFile(client).slice(client.length + 1, -'.json'.length);

/** The recording of a client as recorded, markers and all. */
export const rawClientFixture = (client: RecordedClient): Record<string, any> =>
  JSON.parse(readFileSync(new URL(fixtureFile(client), CLIENT_FIXTURES), 'utf8'));

/** A recorded request, with the recorder's "<N more items of the same kind>" list markers taken out. */
export function clientFixture(client: RecordedClient): ClientFixture {
  const raw = rawClientFixture(client);
  const dropMarkers = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.filter((v) => !(typeof v === 'string' && /^<\d+ more items of the same kind>$/.test(v))).map(dropMarkers);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, dropMarkers(v)]));
    return value;
  };
  // Transport headers described the original body; the vendor and client headers are kept.
  const headers = Object.fromEntries(Object.entries(raw.headers as Record<string, string>).filter(([k]) => !['content-length', 'connection', 'accept-encoding', 'host'].includes(k)));
  return { method: raw.method, url: raw.url, headers, body: dropMarkers(raw.body) as Record<string, unknown> };
}
