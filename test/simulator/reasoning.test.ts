// Reasoning on the simulator: each dialect's own shape, whole and streamed, and each vendor's way of counting it.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import t from 'tap';
import { startSimulator } from '../../simulator/server.ts';
import { eventsOf, postJson } from './helpers.ts';

const sim = await startSimulator();
t.teardown(() => sim.close());
const HEADERS = { 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' };
const anthropic = new Anthropic({ apiKey: 'sk-ant-upstream', baseURL: sim.url, maxRetries: 0 });
const openai = new OpenAI({ apiKey: 'sk-test-upstream', baseURL: sim.url + '/v1', maxRetries: 0 });
const genai = new GoogleGenAI({ apiKey: 'AIza-upstream', httpOptions: { baseUrl: sim.url } });

const ask = 'Weather in Paris?';
const thought = 'The user asks Weather in Paris?';
const answer = 'Echo: Weather in Paris?';
// By hand: prompt (3 + Weather|in|Paris|? 4) + 3 = 10; thought The|user|asks|Weather|in|Paris|? = 7; answer Echo|:|Weather|in|Paris|? = 6.
const thinking = { type: 'enabled', budget_tokens: 1024 } as const;
const claude = { model: 'claude-sonnet-4-5', max_tokens: 2048, messages: [{ role: 'user' as const, content: ask }] };

t.test('Anthropic: a signed thinking block first; output_tokens counts thinking and answer (13)', async (t) => {
  const message = await (await postJson(sim, '/v1/messages', { ...claude, thinking }, HEADERS)).json();
  t.equal(message.content.length, 2);
  t.match(message.content[0], { type: 'thinking', thinking: thought, signature: /^[A-Za-z0-9+/]{60,}={0,2}$/ });
  t.same(message.content[1], { type: 'text', text: answer, citations: null });
  t.same([message.usage.input_tokens, message.usage.output_tokens], [10, 13]);
  const adaptive = await (await postJson(sim, '/v1/messages', { ...claude, thinking: { type: 'adaptive' } }, HEADERS)).json();
  t.equal(adaptive.content[0].type, 'thinking', 'adaptive thinking thinks too');
  const omitted = await (await postJson(sim, '/v1/messages', { ...claude, thinking: { ...thinking, display: 'omitted' } }, HEADERS)).json();
  t.match(omitted.content[0], { type: 'thinking', thinking: '', signature: /./ }, 'display omitted: no text, still a signature');
  t.equal(omitted.usage.output_tokens, 13, 'omitted thinking is still billed');
  const plain = await (await postJson(sim, '/v1/messages', claude, HEADERS)).json();
  t.same(plain.content.map((b: { type: string }) => b.type), ['text'], 'no thinking unless asked');
});

t.test('Anthropic stream: thinking_delta pieces, then signature_delta just before the block stops; the SDK assembles both', async (t) => {
  const res = await postJson(sim, '/v1/messages', { ...claude, thinking, stream: true }, HEADERS);
  const events = eventsOf(await res.text()).filter((e) => e.data.index === 0);
  t.same(events[0].data.content_block, { type: 'thinking', thinking: '', signature: '' });
  const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
  t.same(deltas.slice(0, -1).map((d) => d.type), Array(deltas.length - 1).fill('thinking_delta'));
  t.equal(deltas.slice(0, -1).map((d) => d.thinking).join(''), thought);
  t.equal(deltas[deltas.length - 1].type, 'signature_delta');
  t.equal(events[events.length - 1].event, 'content_block_stop');

  const stream = anthropic.messages.stream({ ...claude, thinking });
  const signatures: string[] = [];
  stream.on('signature', (signature) => signatures.push(signature));
  const final = await stream.finalMessage();
  t.same(final.content[0], { type: 'thinking', thinking: thought, signature: signatures[0] });
  t.equal(final.usage.output_tokens, 13);
});

t.test('Responses: a reasoning item with its summary and, when included, encrypted_content; reasoning_tokens inside output_tokens', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: ask, reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false });
  const n = res.headers.get('x-request-id')!.slice('req_sim_'.length);
  const body = await res.json();
  t.match(body.output[0], { id: `rs_sim_${n}`, type: 'reasoning', summary: [{ type: 'summary_text', text: thought }], encrypted_content: /^[A-Za-z0-9+/]+={0,2}$/ });
  t.equal(body.output[1].content[0].text, answer);
  t.same(body.usage, { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 13, output_tokens_details: { reasoning_tokens: 7 }, total_tokens: 23 });
  t.same(body.reasoning, { effort: 'low', summary: 'auto' });
  const bare = await (await postJson(sim, '/v1/responses', { model: 'gpt-5', input: ask, reasoning: { effort: 'medium' } })).json();
  t.same(bare.output[0], { id: bare.output[0].id, type: 'reasoning', summary: [] }, 'no summary unless asked, no encrypted_content unless included');
  const none = await (await postJson(sim, '/v1/responses', { model: 'gpt-5', input: ask, reasoning: { effort: 'none' } })).json();
  t.same([none.output.length, none.usage.output_tokens_details.reasoning_tokens], [1, 0], 'effort none: no reasoning');
});

t.test('Responses stream: the reasoning item\'s summary part and text events, then the message at output_index 1; the SDK accumulates', async (t) => {
  const res = await postJson(sim, '/v1/responses', { model: 'gpt-5', input: ask, reasoning: { summary: 'detailed' }, stream: true });
  const events = eventsOf(await res.text());
  const reasoning = events.filter((e) => e.data.output_index === 0).map((e) => e.event);
  t.same(reasoning.filter((k) => k !== 'response.reasoning_summary_text.delta'), [
    'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.done',
    'response.reasoning_summary_part.done', 'response.output_item.done',
  ]);
  const deltas = events.filter((e) => e.event === 'response.reasoning_summary_text.delta');
  t.equal(deltas.map((e) => e.data.delta).join(''), thought);
  t.ok(deltas.every((e) => e.data.summary_index === 0 && typeof e.data.obfuscation === 'string'));
  t.same(events.find((e) => e.event === 'response.output_item.added' && e.data.output_index === 1)!.data.item.type, 'message');
  t.same(events.map((e) => e.data.sequence_number), events.map((_, i) => i));

  const final = await openai.responses.stream({ model: 'gpt-5', input: ask, reasoning: { effort: 'low', summary: 'auto' } }).finalResponse();
  t.same(final.output[0].type === 'reasoning' && final.output[0].summary, [{ type: 'summary_text', text: thought }]);
  t.equal(final.output_text, answer);
  t.equal(final.usage!.output_tokens_details.reasoning_tokens, 7);
});

t.test('chat: reasoning_effort bills hidden reasoning inside completion_tokens and names it in reasoning_tokens', async (t) => {
  const reply = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: ask }], reasoning_effort: 'low' });
  t.equal(reply.choices[0].message.content, answer);
  t.same([reply.usage!.completion_tokens, reply.usage!.completion_tokens_details!.reasoning_tokens, reply.usage!.total_tokens], [13, 7, 23]);
  const plain = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: ask }] });
  t.same([plain.usage!.completion_tokens, plain.usage!.completion_tokens_details!.reasoning_tokens], [6, 0]);
});

t.test('Gemini: a thought part when includeThoughts, the signature on the first answer part, thoughtsTokenCount apart', async (t) => {
  const body = { contents: [{ role: 'user', parts: [{ text: ask }] }], generationConfig: { thinkingConfig: { includeThoughts: true } } };
  const reply = await (await postJson(sim, '/v1beta/models/gemini-2.5-flash:generateContent', body)).json();
  const parts = reply.candidates[0].content.parts;
  t.same(parts[0], { text: thought, thought: true });
  t.match(parts[1], { text: answer, thoughtSignature: /^[A-Za-z0-9+/]+={0,2}$/ });
  t.same(reply.usageMetadata, { promptTokenCount: 10, candidatesTokenCount: 6, thoughtsTokenCount: 7, totalTokenCount: 23 });
  const hidden = await (await postJson(sim, '/v1beta/models/gemini-2.5-flash:generateContent', { ...body, generationConfig: { thinkingConfig: { thinkingBudget: 1024 } } })).json();
  t.same(hidden.candidates[0].content.parts.map((p: object) => Object.keys(p)), [['text', 'thoughtSignature']], 'a budget alone thinks without showing thoughts');
  t.equal(hidden.usageMetadata.thoughtsTokenCount, 7);
});

t.test('Gemini stream through the SDK: thoughts first, then the answer; the SDK keeps thought and thoughtSignature', async (t) => {
  const chunks = [];
  const stream = await genai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: ask, config: { thinkingConfig: { includeThoughts: true } } });
  for await (const chunk of stream) chunks.push(chunk);
  const parts = chunks.flatMap((c) => c.candidates?.[0].content?.parts ?? []);
  t.same(parts[0], { text: thought, thought: true });
  t.ok(typeof parts[1].thoughtSignature === 'string' && parts.slice(2).every((p) => p.thoughtSignature === undefined), 'only the first answer part is signed');
  t.equal(parts.slice(1).map((p) => p.text).join(''), answer);
  t.same(chunks[chunks.length - 1].usageMetadata, { promptTokenCount: 10, candidatesTokenCount: 6, thoughtsTokenCount: 7, totalTokenCount: 23 });
});
