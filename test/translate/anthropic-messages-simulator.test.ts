// What encodeRequest sends an Anthropic upstream is what the strict simulator (as strict as the real API) accepts: every
// canonical fixture, the recorded Claude Code request, and tool loops whose thinking the simulator itself signed; its
// answers, whole and streamed, decode back into canonical answers.
import t from 'tap';
import type { CanonMessage, CanonRequest, CanonResponse } from '../../core/canonical.ts';
import { startSimulator } from '../../simulator/server.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { codec } from '../../adapters/anthropic-messages/codec/index.ts';
import { requests, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { claudeCodeBody, ctxFor, decodeAll } from './anthropic-messages-helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

const MODEL = 'claude-sonnet-4-5';

/** The request as the bridge sends it: the codec's path, body and headers, the account's key. */
async function send(req: CanonRequest): Promise<{ status: number; text: string }> {
  const out = codec.encodeRequest({ ...req, model: MODEL }, ctxFor(req));
  const res = await fetch(sim.url + out.path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-sim', ...out.headers },
    body: JSON.stringify(out.body),
  });
  return { status: res.status, text: await res.text() };
}

/** The simulator's answer to a request, read back by the codec (streamed or whole, as the request asked). */
async function answer(req: CanonRequest): Promise<CanonResponse> {
  const { status, text } = await send(req);
  if (status !== 200) throw new Error(`${status}: ${text}`);
  return req.stream ? collectEvents(decodeAll(text, ctxFor(req))) : codec.decodeResponse(JSON.parse(text), ctxFor(req));
}

t.test('every canonical fixture request is accepted (200) and its answer decodes', async (t) => {
  for (const [name, req] of Object.entries(requests) as [string, CanonRequest][]) {
    const { status, text } = await send(req);
    t.equal(status, 200, `${name}: ${status === 200 ? 'accepted' : text}`);
    if (req.operation === 'count_tokens') {
      t.ok(codec.decodeCount(JSON.parse(text)).inputTokens > 0, `${name}: counted`);
      continue;
    }
    const res = req.stream ? collectEvents(decodeAll(text, ctxFor(req))) : codec.decodeResponse(JSON.parse(text), ctxFor(req));
    t.ok(res.content.length > 0 && res.usage.input > 0 && res.usage.output > 0, `${name}: content and usage`);
  }
});

t.test('structured output through the forced tool: the answer is JSON text with stop end', async (t) => {
  const res = await answer(requests.structured);
  t.equal(res.stop, 'end');
  t.strictSame(res.content.map((b) => b.type), ['text']);
  t.doesNotThrow(() => JSON.parse(res.content[0].type === 'text' ? res.content[0].text : ''));
});

t.test('the recorded Claude Code request, decoded and encoded again, is accepted', async (t) => {
  const req = codec.decodeRequest(claudeCodeBody(), 'generate', { model: MODEL, path: '/v1/messages', query: 'beta=true' });
  const res = await answer(req);
  t.strictSame(res.content.map((b) => b.type), ['reasoning', 'tool_call'], 'thinking, then a call of its first tool');
  t.equal(res.stop, 'tool_use');
});

const tools: CanonRequest['tools'] = [{ kind: 'function', name: 'get_weather', description: 'Weather', parameters: WEATHER_SCHEMA }];
const ask: CanonMessage = { role: 'user', content: [{ type: 'text', text: 'Weather in Paris? use get_weather' }] };
const loopReq = (messages: CanonMessage[], stream = false): CanonRequest =>
  ({ ...requests.text, system: [], temperature: undefined, stream, tools, reasoning: { enabled: true, effort: 'low' }, maxOutputTokens: 4000, messages });

t.test('a tool loop with thinking: the simulator\'s own signed thinking is replayed first and accepted', async (t) => {
  for (const stream of [false, true]) {
    const first = await answer(loopReq([ask], stream));
    t.strictSame(first.content.map((b) => b.type), ['reasoning', 'tool_call'], `${stream ? 'streamed' : 'whole'}: thinking and a call`);
    const call = first.content[1];
    if (call.type !== 'tool_call') continue;
    const history: CanonMessage[] = [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', callId: call.id, content: [{ type: 'text', text: '18 C' }] }] }];
    const next = await answer(loopReq(history, stream));
    t.equal(next.stop, 'end', 'the next turn is accepted and reports the result');
    t.match(next.content.at(-1), { type: 'text', text: /18 C/ });

    // The same loop as another provider made it: its thinking cannot be replayed, so thinking goes off for this request.
    const foreign = first.content.map((b) => (b.type === 'reasoning' ? { ...b, signature: { format: 'gemini', value: 'CiQB' } } : b));
    const other = await send(loopReq([ask, { role: 'assistant', content: foreign }, history[2]], stream));
    t.equal(other.status, 200, `a foreign history: ${other.status === 200 ? 'accepted' : other.text}`);
  }
});

t.test('ids another format made (dots, colons) are fitted alike in the call and its result, and accepted', async (t) => {
  const history: CanonMessage[] = [
    ask,
    { role: 'assistant', content: [{ type: 'tool_call', id: 'functions.get_weather:0', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
    { role: 'user', content: [{ type: 'text', text: 'quick please' }] },
    { role: 'user', content: [{ type: 'tool_result', callId: 'functions.get_weather:0', content: [{ type: 'text', text: '18 C' }], isError: true }] },
  ];
  const { status, text } = await send({ ...loopReq(history), reasoning: undefined });
  t.equal(status, 200, status === 200 ? 'accepted' : text);
});
