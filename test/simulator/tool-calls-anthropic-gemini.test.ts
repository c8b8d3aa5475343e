// Tool calls on the simulator's Anthropic and Gemini dialects: parallel calls whole and streamed, read by their SDKs.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { eventsOf, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());
const HEADERS = { 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' };
const anthropic = new Anthropic({ apiKey: 'sk-ant-upstream', baseURL: sim.url, maxRetries: 0 });
const genai = new GoogleGenAI({ apiKey: 'AIza-upstream', httpOptions: { baseUrl: sim.url } });

const ask = 'Call get_weather and get_time for Paris';
// By hand, as in tool-calls-openai: prompt (3 + 10) + 3 = 16; each call's input JSON = 18 tokens.
const input = { input: ask };
const tools = ['get_weather', 'get_time', 'get_news'].map((name) => ({ name, input_schema: { type: 'object' as const, properties: {} } }));
const declarations = [{ functionDeclarations: ['get_weather', 'get_time', 'get_news'].map((name) => ({ name, parameters: { type: 'OBJECT', properties: {} } })) }];
const seqOf = (res: Response) => res.headers.get('x-request-id')!.slice('req_sim_'.length);

t.test('Anthropic: two tool_use blocks, whole; disable_parallel_tool_use leaves one', async (t) => {
  const res = await postJson(sim, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, tools, messages: [{ role: 'user', content: ask }] }, HEADERS);
  const n = seqOf(res);
  const message = await res.json();
  t.same(message.content, [
    { type: 'tool_use', id: `toolu_sim_${n}`, name: 'get_weather', input },
    { type: 'tool_use', id: `toolu_sim_${n}_1`, name: 'get_time', input },
  ]);
  t.equal(message.stop_reason, 'tool_use');
  t.same([message.usage.input_tokens, message.usage.output_tokens], [16, 36]);
  const single = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, messages: [{ role: 'user', content: ask }] });
  t.same(single.content.map((b) => b.type === 'tool_use' && b.name), ['get_weather']);
});

t.test('Anthropic stream: each tool_use opens with input {}, then input_json_delta pieces, then closes', async (t) => {
  const res = await postJson(sim, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, tools, stream: true, messages: [{ role: 'user', content: ask }] }, HEADERS);
  const events = eventsOf(await res.text());
  for (const index of [0, 1]) {
    const mine = events.filter((e) => e.data.index === index);
    t.same(mine[0].data, { type: 'content_block_start', index, content_block: { type: 'tool_use', id: index === 0 ? `toolu_sim_${seqOf(res)}` : `toolu_sim_${seqOf(res)}_1`, name: ['get_weather', 'get_time'][index], input: {} } });
    const deltas = mine.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
    t.ok(deltas.length >= 3 && deltas.every((d) => d.type === 'input_json_delta'));
    t.same(JSON.parse(deltas.map((d) => d.partial_json).join('')), input);
    t.equal(mine[mine.length - 1].event, 'content_block_stop');
  }
  const stops = events.filter((e) => e.event === 'content_block_stop').map((e) => e.data.index);
  const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.index);
  t.same([starts, stops], [[0, 1], [0, 1]], 'one block open at a time');
});

t.test('Anthropic stream through the SDK: messages.stream accumulates each tool_use input from its deltas', async (t) => {
  const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, tools, messages: [{ role: 'user', content: ask }] });
  const partials: string[] = [];
  stream.on('inputJson', (partial) => partials.push(partial));
  const final = await stream.finalMessage();
  t.same(final.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : b.type)), [['get_weather', input], ['get_time', input]]);
  t.ok(partials.length >= 4, 'inputJson events fired for the fragments');
  t.equal(final.usage.output_tokens, 36);

  const results = final.content.map((b) => ({ type: 'tool_result' as const, tool_use_id: b.type === 'tool_use' ? b.id : '', content: `result ${b.type}` }));
  const next = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, tools, messages: [{ role: 'user', content: ask }, { role: 'assistant', content: final.content }, { role: 'user', content: results }] });
  t.same(next.content, [{ type: 'text', text: 'Tool result: result tool_use result tool_use', citations: null }], 'the round trip is accepted');
});

t.test('Gemini: two functionCall parts, no ids (as Gemini 2.5 sends), finishing with STOP', async (t) => {
  const body = { contents: [{ role: 'user', parts: [{ text: ask }] }], tools: declarations };
  const reply = await (await postJson(sim, '/v1beta/models/gemini-2.5-flash:generateContent', body)).json();
  t.same(reply.candidates[0].content.parts, [{ functionCall: { name: 'get_weather', args: input } }, { functionCall: { name: 'get_time', args: input } }]);
  t.equal(reply.candidates[0].finishReason, 'STOP');
  t.same(reply.usageMetadata, { promptTokenCount: 16, candidatesTokenCount: 36, totalTokenCount: 52 });

  const allowed = await (await postJson(sim, '/v1beta/models/gemini-2.5-flash:generateContent', { ...body, toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_news'] } } })).json();
  t.same(allowed.candidates[0].content.parts.map((p: { functionCall: { name: string } }) => p.functionCall.name), ['get_news']);
});

t.test('Gemini stream through the SDK: whole functionCall parts in one chunk; functionCalls reads both', async (t) => {
  const chunks = [];
  for await (const chunk of await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: ask, config: { tools: declarations as never } })) chunks.push(chunk);
  const calls = chunks.flatMap((c) => c.functionCalls ?? []);
  t.same(calls.map((c) => [c.name, c.args, c.id]), [['get_weather', input, undefined], ['get_time', input, undefined]]);
  t.equal(chunks[chunks.length - 1].candidates?.[0].finishReason, 'STOP');

  const whole = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: ask, config: { tools: declarations as never } });
  const history = [{ role: 'user', parts: [{ text: ask }] }, whole.candidates![0].content!, {
    role: 'user',
    parts: whole.functionCalls!.map((c) => ({ functionResponse: { name: c.name, response: { result: c.name } } })),
  }];
  const next = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: history, config: { tools: declarations as never } });
  t.equal(next.text, 'Tool result: {"result":"get_weather"} {"result":"get_time"}', 'the round trip is accepted');
});
