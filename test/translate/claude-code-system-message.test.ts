// Claude Code with its default model sends a role "system" message inside messages (the Messages beta's
// BetaSystemMessageParam: text with cache_control and a per-turn output_config.effort). Through the real gateway, from
// its recorded request: relayed byte for byte to an Anthropic group, and translated for every other upstream with the
// instruction at its place and its effort as the upstream's reasoning effort; clear_at and bad system messages too.
import t from 'tap';
import { clientFixture } from '../helpers/client-fixtures.ts';
import { bridgeGateway, KEYS, type UpstreamFormat } from './bridge-config.ts';
import { sseData } from './bridge-clients.ts';

const gw = await bridgeGateway(t);
type Obj = Record<string, any>;
const recorded = clientFixture('claude-code-default') as { url: string; headers: Record<string, string>; body: Obj };

/** The recorded request (or a variant of its body) sent with the key of the group on `up`; the upstream's body as it arrived. */
async function send(up: UpstreamFormat, body: Obj = recorded.body): Promise<{ status: number; text: string; sent: string; upstream?: Obj; raw?: string }> {
  const sim = gw.simulators[`sim-${up}`];
  const before = sim.requests.length;
  const headers = Object.fromEntries(Object.entries(recorded.headers).filter(([k]) => k !== 'x-api-key'));
  const sent = JSON.stringify(body);
  const res = await fetch(gw.url + recorded.url, { method: 'POST', headers: { ...headers, 'x-api-key': KEYS[up] }, body: sent });
  const text = await res.text();
  const raw = sim.requests.length > before ? sim.requests[sim.requests.length - 1].body : undefined;
  return { status: res.status, text, sent, ...(raw ? { raw, upstream: JSON.parse(raw) } : {}) };
}

const systemText = recorded.body.messages[1].content[0].text as string;
/** The recorded body with the request-wide effort low and the system message's own high: the message's wins. */
const efforts = (): Obj => {
  const body = structuredClone(recorded.body) as Obj;
  body.output_config = { effort: 'low' };
  body.messages[1].output_config = { effort: 'high' };
  return body;
};

t.test('an Anthropic group gets the request byte for byte, and Claude Code its stream to message_stop', async (t) => {
  const r = await send('anthropic-messages');
  t.equal(r.status, 200, r.text.slice(0, 300));
  t.equal(r.raw, r.sent, 'the upstream got the very bytes the client sent');
  const data = sseData(r.text) as Obj[];
  t.equal(data[data.length - 1].type, 'message_stop');
});

const TRANSLATED: Record<Exclude<UpstreamFormat, 'anthropic-messages'>, (t: any, upstream: Obj, highEffort: boolean) => void> = {
  'openai-chat': (t, up, high) => {
    t.strictSame(up.messages.map((m: Obj) => m.role), ['system', 'user', 'system'], 'the system prompt, the user turn, the system message after it');
    t.equal(up.messages[2].content, systemText);
    t.equal(up.reasoning_effort, high ? 'high' : 'medium');
  },
  'openai-responses': (t, up, high) => {
    t.strictSame(up.input.map((i: Obj) => i.role), ['user', 'developer'], 'the user turn, then a developer message in the system message\'s place');
    t.strictSame(up.input[1].content, [{ type: 'input_text', text: systemText }]);
    t.equal(up.reasoning.effort, high ? 'high' : 'medium');
  },
  gemini: (t, up, high) => {
    t.equal(up.contents.length, 1, 'one user turn');
    const parts = up.contents[0].parts;
    t.strictSame(parts[parts.length - 1], { text: `[system] ${systemText}` }, 'the system message as user text after the user\'s own, in place');
    t.equal(up.systemInstruction.parts.length, recorded.body.system.length, 'the top-level system prompt stays the systemInstruction');
    t.equal(up.generationConfig.thinkingConfig.thinkingBudget, high ? 10240 : 4096, 'the effort as a thinking budget');
  },
};

for (const [up, check] of Object.entries(TRANSLATED) as [Exclude<UpstreamFormat, 'anthropic-messages'>, typeof TRANSLATED['gemini']][]) {
  t.test(`→ ${up}: accepted by the strict upstream, the system message in place, its effort the upstream's; the stream ends with message_stop`, async (t) => {
    const r = await send(up);
    t.equal(r.status, 200, r.text.slice(0, 300));
    const data = sseData(r.text) as Obj[];
    t.equal(data[data.length - 1].type, 'message_stop');
    t.notOk(data.some((d) => d.type === 'error'), 'no error event');
    check(t, r.upstream!, false);
    const h = await send(up, efforts());
    t.equal(h.status, 200, h.text.slice(0, 300));
    check(t, h.upstream!, true);
  });
}

t.test('clear_at next_user_message: shown until a later user message exists, then neither its text nor its effort reaches the upstream', async (t) => {
  const body = efforts();
  body.messages[1].clear_at = 'next_user_message';
  const shown = await send('openai-chat', body);
  t.equal(shown.status, 200, shown.text.slice(0, 300));
  t.strictSame(shown.upstream!.messages.map((m: Obj) => m.role), ['system', 'user', 'system'], 'no user message after it yet: shown');
  body.messages.push({ role: 'assistant', content: 'Which folder?' }, { role: 'user', content: 'This one.' });
  const cleared = await send('openai-chat', body);
  t.equal(cleared.status, 200, cleared.text.slice(0, 300));
  t.strictSame(cleared.upstream!.messages.map((m: Obj) => m.role), ['system', 'user', 'assistant', 'user'], 'cleared');
  t.equal(cleared.upstream!.reasoning_effort, 'low', 'the request-wide effort again');
});

t.test('a system message the API refuses is refused before any upstream, in Anthropic\'s error envelope', async (t) => {
  const cases: [Obj, string][] = [
    [{ role: 'system' }, 'messages.1'],
    [{ role: 'system', output_config: {} }, 'messages.1'],
    [{ role: 'system', content: 'x', output_config: { effort: 'extreme' } }, 'messages.1.output_config.effort'],
    [{ role: 'system', content: 'x', clear_at: 'tomorrow' }, 'messages.1.clear_at'],
    [{ role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }, 'messages.1.content.0.type'],
    [{ role: 'user', content: 'x', clear_at: 'never' }, 'messages.1.clear_at'],
    [{ role: 'developer', content: 'x' }, 'messages.1.role'],
  ];
  for (const [message, param] of cases) {
    const body = structuredClone(recorded.body) as Obj;
    body.messages[1] = message;
    const r = await send('openai-chat', body);
    t.equal(r.status, 400, JSON.stringify(message));
    t.equal(r.upstream, undefined, 'nothing reached the upstream');
    const error = JSON.parse(r.text);
    t.equal(error.type, 'error');
    t.equal(error.error.type, 'invalid_request_error');
    t.match(error.error.message, param, `the message names ${param}`);
  }
  const body = structuredClone(recorded.body) as Obj;
  body.messages[1].content.push({ type: 'tool_addition', tool: { type: 'tool_reference', name: 'Bash' } });
  const r = await send('gemini', body);
  t.equal(r.status, 400);
  t.match(JSON.parse(r.text).error, { type: 'invalid_request_error', message: /tool_addition.*cannot be translated/ }, 'a tool change has no translation: said so');
});
