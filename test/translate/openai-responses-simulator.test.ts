// What the Responses codec sends an OpenAI upstream is a valid request to the strict simulator (which refuses what the
// real API refuses), for every canonical fixture and for the recorded Codex request; and its answers, decoded by the
// codec, make a next turn the simulator takes too (OpenAI's encrypted reasoning replayed, calls answered).
import t from 'tap';
import type { CanonMessage, CanonRequest, CanonResponse } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { startSimulator } from '../../simulator/server.ts';
import { clientFixture } from '../helpers/client-fixtures.ts';
import { postJson } from '../simulator/helpers.ts';
import { requests } from './canonical-fixtures.ts';
import { codec, ctxFor, decodeAll, decodeCtx, FORMAT } from './openai-responses-helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());

async function send(req: CanonRequest): Promise<{ status: number; text: string }> {
  const { path, body } = codec.encodeRequest(req, ctxFor(req));
  const res = await postJson(sim, path, body);
  return { status: res.status, text: await res.text() };
}

/** The simulator's answer to `req`, decoded by the codec, whole or streamed as the request says. */
async function answer(req: CanonRequest): Promise<CanonResponse> {
  const { status, text } = await send(req);
  if (status !== 200) throw new Error(`simulator refused: ${text}`);
  return req.stream ? collectEvents(decodeAll(text, ctxFor(req))) : codec.decodeResponse(JSON.parse(text), ctxFor(req));
}

/** The next turn: the answer as the assistant's turn, every call answered, and a user question after. */
function nextTurn(req: CanonRequest, res: CanonResponse): CanonRequest {
  const results = res.content.flatMap((b) => (b.type === 'tool_call' ? [{ type: 'tool_result' as const, callId: b.id, content: [{ type: 'text' as const, text: 'done' }] }] : []));
  const user: CanonMessage = { role: 'user', content: [...results, { type: 'text', text: 'And then?' }] };
  return { ...req, messages: [...req.messages, { role: 'assistant', content: res.content }, user] };
}

t.test('the simulator is strict: what the real API refuses, it refuses (a control for the tests below)', async (t) => {
  const orphan = await postJson(sim, '/v1/responses', { model: 'm', input: [{ type: 'function_call_output', call_id: 'call_x', output: 'hi' }] });
  t.equal(orphan.status, 400);
  t.match(await orphan.json(), { error: { message: /No tool call found/ } });
  const chatRole = await postJson(sim, '/v1/responses', { model: 'm', input: [{ role: 'tool', content: 'x' }], stop: ['x'] });
  t.equal(chatRole.status, 400, 'an unknown field or a chat role');
});

t.test('every fixture request, encoded for OpenAI, is accepted by the strict simulator', async (t) => {
  for (const [name, req] of Object.entries(requests)) {
    const { status, text } = await send(req);
    t.equal(status, 200, `${name}: ${status === 200 ? 'accepted' : text}`);
  }
});

t.test('the recorded Codex request, through the codec both ways, is accepted', async (t) => {
  const { body } = clientFixture('codex-cli');
  const sent = { ...body, input: [...(body.input as unknown[]), { role: 'user', content: 'List the files here.' }] };
  const req = codec.decodeRequest(sent, 'generate', decodeCtx);
  const res = await answer(req);
  t.ok(res.content.some((b) => b.type === 'tool_call'), 'it called one of Codex\'s tools');
  t.equal((await send(nextTurn(req, res))).status, 200, 'and its next turn, call answered and reasoning replayed, is accepted');
});

t.test('OpenAI\'s reasoning comes back signed by OpenAI and replays, whole and streamed', async (t) => {
  for (const stream of [false, true]) {
    const req = { ...requests.reasoning, stream };
    const res = await answer(req);
    const reasoning = res.content.find((b) => b.type === 'reasoning');
    t.match(reasoning, { type: 'reasoning', signature: { format: FORMAT }, id: { format: FORMAT } }, `stream ${stream}: encrypted_content kept as OpenAI's`);
    t.ok(reasoning && reasoning.text.length > 0, 'its summary shown');
    t.ok(res.usage.reasoning > 0 && res.usage.output >= res.usage.reasoning, 'reasoning tokens inside output');
    const next = await send(nextTurn(req, res));
    t.equal(next.status, 200, `stream ${stream}: the simulator verified the replayed encrypted_content`);
  }
});

t.test('tool calls come back and their results make a valid next turn, whole and streamed', async (t) => {
  for (const stream of [false, true]) {
    const req = { ...requests.forcedTool, stream };
    const res = await answer(req);
    t.equal(res.stop, 'tool_use');
    t.match(res.content, [{ type: 'tool_call', name: 'get_weather' }]);
    t.equal((await send(nextTurn(req, res))).status, 200, `stream ${stream}`);
  }
});

t.test('a foreign signature is dropped, so the strict simulator never sees it', async (t) => {
  const req = nextTurn(requests.reasoning, {
    id: 'x', model: 'm', stop: 'end', usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    content: [{ type: 'reasoning', text: 'hm', signature: { format: 'anthropic-messages', value: 'sig' } }, { type: 'text', text: '391' }],
  });
  t.equal((await send(req)).status, 200);
});
