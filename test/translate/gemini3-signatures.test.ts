// Gemini 3's thought signatures survive every client (issue 41 §5): the simulator's gemini-3 model signs the first
// function call of each answer with a signature minted for that call and refuses a step that comes back without one.
// Through the official SDKs, whole and streamed, a two-turn tool round trip must bring the real signature back on the
// replayed functionCall: an Anthropic client in a thinking block before the tool_use, a stateless Responses client in
// a reasoning item's encrypted_content, a chat client through the per-key store (memory and Redis). The placeholder
// goes only when none of these has it (another key, an expired entry), and is counted.
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Gateway } from '../../app/gateway.ts';
import { unseal } from '../../simulator/signatures.ts';
import { callToken, SKIP_SIGNATURE } from '../../simulator/strict/gemini.ts';
import { withGateway } from '../helpers/gateway.ts';
import { redisForTest } from '../store/redis-server.ts';
import { bridgeConfig, KEYS } from './bridge-config.ts';
import { WEATHER } from './sdk-helpers.ts';

const MODEL = 'gemini-3-pro-preview';
const KEY = KEYS.gemini;
const OTHER_KEY = 'sk-up-gemini-other-0006';
const TTL_MS = 1000;

/** The bridge's gateway with a second key on the Gemini group, gemini-3 priced, and signatures kept for TTL_MS. */
const config = (store?: string) => {
  let text = bridgeConfig()
    .replace('pricing:\n', 'pricing:\n  "gemini-3*": { input: 2.0, output: 12.0 }\n')
    .replace('  - { id: other-anthropic,', `  - { id: other-gemini, key: ${OTHER_KEY}, group: g-gemini }\n  - { id: other-anthropic,`)
    .replace('relay: [auth, group-check, model-allowlist, rate-limit, metering, proxy]', `relay: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { signature_ttl_ms: ${TTL_MS} } }]`);
  if (store) text = text.replace('store: { path: ":memory:" }', store);
  return text;
};

const gw = await withGateway(t, config());
const redis = await redisForTest(t, 'gemini3-signatures');
const gwRedis = await withGateway(t, config(`store: { redis: "${redis.url}", prefix: "${redis.prefix}" }`));

/** The functionCall parts of the model turns the Gemini upstream got last. */
function replayedCalls(g: Gateway): Array<Record<string, any>> {
  const body = JSON.parse(g.simulators['sim-gemini'].requests.at(-1)!.body);
  return (body.contents as any[]).filter((c) => c.role === 'model').map((c) => c.parts.find((p: any) => p.functionCall));
}

/** The real signature: the one the simulator minted for this very call. */
function assertReal(t: Tap, part: Record<string, any> | undefined, what: string): void {
  t.ok(part, `${what}: a functionCall went back`);
  t.not(part?.thoughtSignature, SKIP_SIGNATURE, `${what}: not the placeholder`);
  t.equal(unseal('gemini', part?.thoughtSignature), callToken(part?.functionCall), `${what}: the signature minted for this call`);
}

async function standIns(t: Tap, g: Gateway, format: string): Promise<number> {
  const text = await (await fetch(`${g.url}/metrics`)).text();
  t.match(text, /# TYPE gateway_thought_signature_standins_total counter/, 'the counter is declared');
  const line = text.split('\n').find((l) => l.startsWith(`gateway_thought_signature_standins_total{format="${format}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];
const ask = 'Weather in Paris? use get_weather';

t.test('Anthropic SDK (as Claude Code): the signature rides in a thinking block before the tool_use', async (t) => {
  const claude = new Anthropic({ apiKey: KEY, baseURL: gw.url, maxRetries: 0 });
  const tools = [{ name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.parameters as Anthropic.Tool.InputSchema }];
  const user = { role: 'user' as const, content: ask };
  const roundTrip = async (t: Tap, content: Anthropic.ContentBlock[]) => {
    const use = content.find((b) => b.type === 'tool_use')!;
    const back = await claude.messages.create({
      model: MODEL, max_tokens: 2048, tools,
      messages: [user, { role: 'assistant', content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny, 21 C' }] }],
    });
    t.match(back.content[0].type === 'text' && back.content[0].text, /^Tool result: .*Sunny, 21 C/, 'the second turn answered');
    assertReal(t, replayedCalls(gw)[0], 'the replayed call');
  };

  await t.test('whole, without thinking asked: an empty thinking block carries it', async (t) => {
    const res = await claude.messages.create({ model: MODEL, max_tokens: 2048, tools, messages: [user] });
    t.equal(res.stop_reason, 'tool_use');
    t.match(res.content, [{ type: 'thinking', thinking: '', signature: /^gw1:gemini:/ }, { type: 'tool_use', name: 'get_weather' }]);
    await roundTrip(t, res.content);
  });
  await t.test('streamed, with thinking on: the shown thought, then the carrier, then the call', async (t) => {
    const stream = claude.messages.stream({ model: MODEL, max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 }, tools, messages: [user] });
    const final = await stream.finalMessage();
    t.match(final.content.map((b) => b.type), ['thinking', 'thinking', 'tool_use']);
    t.match(final.content[1], { type: 'thinking', thinking: '', signature: /^gw1:gemini:/ });
    await roundTrip(t, final.content);
  });
  t.equal(await standIns(t, gw, 'anthropic-messages'), 0, 'no placeholder was needed');
});

t.test('Responses SDK, store: false with reasoning.encrypted_content (as Codex): a reasoning item carries it', async (t) => {
  const openai = new OpenAI({ apiKey: KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const tools = [{ type: 'function' as const, name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.parameters, strict: false }];
  const base = { model: MODEL, tools, store: false, include: ['reasoning.encrypted_content' as const] };
  const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: ask }];
  const roundTrip = async (t: Tap, output: OpenAI.Responses.ResponseOutputItem[]) => {
    t.match(output, [{ type: 'reasoning', summary: [], encrypted_content: /^gw1:gemini:/ }, { type: 'function_call', name: 'get_weather' }]);
    const call = output.find((i) => i.type === 'function_call')!;
    const back = await openai.responses.create({
      ...base, input: [...input, ...(output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C' }],
    });
    t.match(back.output_text, /^Tool result: .*Sunny, 21 C/, 'the second turn answered');
    assertReal(t, replayedCalls(gw)[0], 'the replayed call');
  };

  await t.test('whole', async (t) => {
    const res = await openai.responses.create({ ...base, input });
    await roundTrip(t, res.output);
  });
  await t.test('streamed', async (t) => {
    const stream = openai.responses.stream({ ...base, input });
    const final = await stream.finalResponse();
    await roundTrip(t, final.output);
  });
  t.equal(await standIns(t, gw, 'openai-responses'), 0, 'no placeholder was needed');

  await t.test('without encrypted_content asked: no reasoning item, the store keeps it', async (t) => {
    const res = await openai.responses.create({ model: MODEL, tools, store: false, input });
    t.strictSame(res.output.map((i) => i.type), ['function_call']);
    const call = res.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    await openai.responses.create({ model: MODEL, tools, store: false, input: [...input, call, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny' }] });
    assertReal(t, replayedCalls(gw)[0], 'the replayed call');
    t.equal(await standIns(t, gw, 'openai-responses'), 0);
  });
});

/** Chat completions: nothing to carry it in, so the per-key store does. */
function chatSuite(t: Tap, g: Gateway, label: string): void {
  t.test(`chat completions (${label} store): the per-key store brings it back`, async (t) => {
    const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${g.url}/v1`, maxRetries: 0 });
    const openai = client(KEY);
    const tools = [{ type: 'function' as const, function: WEATHER }, { type: 'function' as const, function: { ...WEATHER, name: 'get_time', description: 'Local time' } }];
    const user: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: ask };
    const replay = (key: string, message: OpenAI.Chat.ChatCompletionMessage) => client(key).chat.completions.create({
      model: MODEL, tools,
      messages: [user, message, ...message.tool_calls!.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'Sunny, 21 C' }))],
    });
    const before = await standIns(t, g, 'openai-chat');

    await t.test('whole', async (t) => {
      const res = await openai.chat.completions.create({ model: MODEL, tools, messages: [user] });
      const message = res.choices[0].message;
      t.equal(message.tool_calls?.length, 1);
      const back = await replay(KEY, message);
      t.match(back.choices[0].message.content, /^Tool result: .*Sunny, 21 C/);
      assertReal(t, replayedCalls(g)[0], 'the replayed call');
    });
    await t.test('streamed, parallel calls: the first call of the batch gets its signature back', async (t) => {
      const stream = openai.chat.completions.stream({ model: MODEL, tools, messages: [{ role: 'user', content: 'get_weather and get_time for Paris' }] });
      const message = (await stream.finalChatCompletion()).choices[0].message;
      t.strictSame(message.tool_calls?.map((c) => c.type === 'function' && c.function.name), ['get_weather', 'get_time']);
      await client(KEY).chat.completions.create({
        model: MODEL, tools,
        messages: [{ role: 'user', content: 'get_weather and get_time for Paris' }, message,
          ...message.tool_calls!.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: 'ok' }))],
      });
      const body = JSON.parse(g.simulators['sim-gemini'].requests.at(-1)!.body);
      const parts = (body.contents as any[]).find((c) => c.role === 'model').parts;
      assertReal(t, parts[0], 'the first call');
      t.equal(parts[1].thoughtSignature, undefined, 'the second call of the batch carries none, as Gemini sent it');
    });
    t.equal(await standIns(t, g, 'openai-chat'), before, 'no placeholder was needed');

    await t.test('another key cannot read them: its replay goes with the placeholder, counted', async (t) => {
      const res = await openai.chat.completions.create({ model: MODEL, tools, messages: [user] });
      const back = await replay(OTHER_KEY, res.choices[0].message);
      t.match(back.choices[0].message.content, /^Tool result: /, 'Gemini takes the placeholder');
      t.equal(replayedCalls(g)[0]?.thoughtSignature, SKIP_SIGNATURE);
      t.equal(await standIns(t, g, 'openai-chat'), before + 1);
    });
    await t.test('past signature_ttl_ms the entry is gone: the placeholder, counted', async (t) => {
      const res = await openai.chat.completions.create({ model: MODEL, tools, messages: [user] });
      await new Promise((r) => setTimeout(r, TTL_MS + 200));
      const back = await replay(KEY, res.choices[0].message);
      t.match(back.choices[0].message.content, /^Tool result: /);
      t.equal(replayedCalls(g)[0]?.thoughtSignature, SKIP_SIGNATURE);
      t.equal(await standIns(t, g, 'openai-chat'), before + 2);
    });
  });
}

chatSuite(t, gw, 'embedded');
chatSuite(t, gwRedis, 'Redis');

t.test('without the placeholder the simulator refuses the step, as Gemini 3 does', async (t) => {
  const sim = gw.simulators['sim-gemini'];
  const post = (parts: unknown[]) => fetch(`${sim.url}/v1beta/models/${MODEL}:generateContent`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'cred-gemini-1' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: ask }] }, { role: 'model', parts }, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'Sunny' } } }] }] }),
  });
  const call = { functionCall: { name: 'get_weather', args: { city: 'Paris' } } };
  const missing = await post([call]);
  t.equal(missing.status, 400);
  t.match(await missing.text(), /Function call is missing a thought_signature in functionCall parts/);
  t.equal((await post([{ ...call, thoughtSignature: SKIP_SIGNATURE }])).status, 200, 'the placeholder passes');
});
