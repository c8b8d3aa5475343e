// What the chat codec sends a chat upstream passes the strict simulator (it refuses what OpenAI refuses), for every
// canonical fixture and the hard cases; and the simulator's answers, whole and streamed (tool calls in fragments),
// decode into canonical answers with the upstream's usage exactly.
import t from 'tap';
import { codec } from '../../adapters/openai-chat/codec/index.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { SseParser } from '../../adapters/shared/sse.ts';
import type { CanonEvent, CanonRequest } from '../../core/canonical.ts';
import { startSimulator } from '../../simulator/server.ts';
import { AUTH } from '../simulator/helpers.ts';
import { requests } from './canonical-fixtures.ts';
import { agentRequest, ctxFor, PNG } from './openai-chat-fixtures.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

async function send(req: CanonRequest): Promise<Response> {
  const { path, body } = codec.encodeRequest(req, ctxFor(req));
  return fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...AUTH }, body: JSON.stringify(body) });
}

async function streamEvents(res: Response, req: CanonRequest): Promise<CanonEvent[]> {
  const decoder = codec.decodeStream(ctxFor(req));
  const parser = new SseParser();
  const events: CanonEvent[] = [];
  for await (const bytes of res.body!) for (const frame of parser.push(Buffer.from(bytes))) events.push(...decoder.frame(frame));
  return [...events, ...decoder.end()];
}

const hardCases: Record<string, CanonRequest> = {
  toolResultMedia: {
    ...requests.toolRoundTrip,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Chart the weather' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'hm', signature: { format: 'anthropic-messages', value: 'SIG' } }, { type: 'tool_call', id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' }, { type: 'tool_call', id: 'toolu_02', name: 'get_weather', arguments: '{"city":"Rome"}' }] },
      {
        role: 'user', content: [
          { type: 'tool_result', callId: 'toolu_01', content: [{ type: 'text', text: 'chart' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG } }] },
          { type: 'tool_result', callId: 'toolu_02', content: [{ type: 'text', text: 'no such city' }], isError: true },
          { type: 'text', text: 'Summarise' },
        ],
      },
    ],
  },
  longNames: {
    ...requests.forcedTool,
    tools: [{ kind: 'function', name: `mcp__server__${'x'.repeat(70)}`, parameters: { type: 'object', properties: {} }, strict: true }],
    toolChoice: { type: 'tool', name: `mcp__server__${'x'.repeat(70)}` },
  },
  customTool: {
    ...requests.text,
    tools: [{ kind: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'patch it' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'call_p', name: 'apply_patch', arguments: '*** Begin Patch', custom: true }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'call_p', content: [{ type: 'text', text: 'done' }] }] },
    ],
  },
  agent: codec.decodeRequest(structuredClone(agentRequest), 'generate', { model: 'gpt-5', path: '/v1/chat/completions', query: '' }),
};

t.test('every canonical fixture and hard case, encoded for a chat upstream, is accepted by the strict simulator', async (t) => {
  const all = { ...Object.fromEntries(Object.entries(requests).filter(([name]) => name !== 'countTokens')), ...hardCases };
  for (const [name, req] of Object.entries(all)) {
    const res = await send(req);
    const text = await res.text();
    t.equal(res.status, 200, `${name}: 200${res.status === 200 ? '' : ` (${text})`}`);
  }
});

t.test('the simulator\'s whole answer and stream decode to the same canonical answer, usage included', async (t) => {
  const req: CanonRequest = { ...requests.forcedTool, tools: [{ kind: 'function', name: 'files.read', parameters: { type: 'object', properties: { input: { type: 'string' } } } }], toolChoice: { type: 'tool', name: 'files.read' } };
  const whole = await send(req);
  t.equal(whole.status, 200);
  const answer = codec.decodeResponse(await whole.json(), ctxFor(req));
  t.equal(answer.stop, 'tool_use');
  t.match(answer.content, [{ type: 'tool_call', name: 'files.read' }], 'the name the client gave, restored');
  t.ok(answer.usage.input > 0 && answer.usage.output > 0, 'the upstream\'s usage');

  const streamed = await send({ ...req, stream: true });
  t.equal(streamed.status, 200);
  const collected = collectEvents(await streamEvents(streamed, req));
  t.equal(collected.error, undefined);
  // The simulator numbers its call ids by request; everything else must agree.
  const same = (r: typeof answer) => ({ ...r, id: '', created: 0, content: r.content.map((b) => (b.type === 'tool_call' ? { ...b, id: '' } : b)) });
  t.strictSame(same(collected), same(answer), 'streamed fragments fold into the same call and the same usage');
  const args = collected.content[0].type === 'tool_call' ? JSON.parse(collected.content[0].arguments) : undefined;
  t.strictSame(args, { input: 'Weather in Oslo' }, 'arguments whole after the fragments');

  const text = await send(requests.streamText);
  const textAnswer = collectEvents(await streamEvents(text, requests.streamText));
  t.equal(textAnswer.stop, 'end');
  t.match(textAnswer.content, [{ type: 'text', text: /Hello there/ }]);
  t.ok(textAnswer.usage.input > 0, 'the usage chunk was asked for and read');
});

t.test('a mid-stream failure of the simulator decodes to an error event, never a finish', async (t) => {
  const { path, body } = codec.encodeRequest(requests.streamText, ctxFor(requests.streamText));
  const res = await fetch(sim.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...AUTH, 'x-simulator-fault': 'midstream-error' }, body: JSON.stringify(body) });
  const events = await streamEvents(res, requests.streamText);
  t.match(events.at(-1), { type: 'error', error: { kind: 'server', message: 'simulated mid-stream failure' } });
  t.notOk(events.some((e) => e.type === 'finish'));
});
