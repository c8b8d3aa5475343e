// The recorded requests of Claude Code (with a named model and with its default one), Codex CLI and Gemini CLI, sent
// through the gateway to groups of every upstream format, its own included: each request (relayed or translated) is
// accepted by the strict simulator (as strict as the real API), and the client gets a whole stream in its own grammar,
// ended by its own terminal event.
import t from 'tap';
import { clientFixture } from '../helpers/client-fixtures.ts';
import { bridgeGateway, KEYS, UPSTREAMS } from './bridge-config.ts';
import { sseData } from './bridge-clients.ts';

const gw = await bridgeGateway(t);

const CLIENTS = [
  { file: 'claude-code', format: 'anthropic-messages', auth: (key: string) => ({ 'x-api-key': key }), terminal: (d: any) => d.type === 'message_stop' },
  // Its default model sends a role "system" message (with a per-turn effort) inside messages.
  { file: 'claude-code-default', format: 'anthropic-messages', auth: (key: string) => ({ 'x-api-key': key }), terminal: (d: any) => d.type === 'message_stop' },
  { file: 'codex-cli', format: 'openai-responses', auth: (key: string) => ({ authorization: `Bearer ${key}` }), terminal: (d: any) => d.type === 'response.completed' },
  { file: 'gemini-cli', format: 'gemini', auth: (key: string) => ({ 'x-goog-api-key': key }), terminal: (d: any) => !!d.candidates?.[0]?.finishReason },
] as const;

/** The recorder kept the first items of each list: Codex's input kept its two developer messages, not the user turn after. */
function withUserTurn(body: Record<string, unknown>): Record<string, unknown> {
  const input = body.input as { role?: string }[] | undefined;
  if (!Array.isArray(input) || input.some((i) => i.role === 'user')) return body;
  return { ...body, input: [...input, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files here.' }] }] };
}

for (const c of CLIENTS) {
  const recorded = clientFixture(c.file);
  const fixture = { ...recorded, body: withUserTurn(recorded.body) };
  for (const up of UPSTREAMS) {
    t.test(`${c.file} → ${up}${up === c.format ? ' (native)' : ''}`, async (t) => {
      const sim = gw.simulators[`sim-${up}`];
      const before = sim.requests.length;
      // The recorded credentials give way to the key of the group on this upstream.
      const headers = Object.fromEntries(Object.entries({ ...fixture.headers }).filter(([k]) => !/^(x-api-key|authorization|x-goog-api-key)$/i.test(k)));
      Object.assign(headers, c.auth(KEYS[up]));
      const res = await fetch(gw.url + fixture.url, { method: fixture.method, headers, body: JSON.stringify(fixture.body) });
      const text = await res.text();
      t.equal(res.status, 200, text.slice(0, 400));
      t.equal(sim.requests.length, before + 1, 'one request reached the upstream, accepted by its strict checks');
      const data = sseData(text).filter((d) => d !== '[DONE]');
      t.ok(data.some(c.terminal), `the stream ended with ${c.format}'s own terminal`);
      t.notOk(data.some((d: any) => d.type === 'error' || d.error), 'no error event');
    });
  }
}
