// The official @anthropic-ai/sdk and @google/genai as clients of translated pairs, on strict single-format simulators:
// Anthropic Messages on chat, Responses and Gemini upstreams; Gemini on chat, Responses and Anthropic upstreams. Per
// pair: text, stream, tool call whole and streamed (the SDK's own accumulation), result round trip, system prompt,
// image input, structured output, the output cap, token counts (estimated where the upstream has no counter), an
// upstream 429 and a mid-stream failure as the SDK's own errors, the ledger = upstream usage; thinking signatures never
// reach another vendor.
import t from 'tap';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import { bridgeGateway, KEYS, type UpstreamFormat } from './bridge-config.ts';
import { IMAGE_IN_UPSTREAM, lastJson, lastRequest, newestRecord, PIXEL_PNG, STRUCTURED_IN_UPSTREAM, SYSTEM_IN_UPSTREAM, upstreamUsage, WEATHER } from './sdk-helpers.ts';

const gw = await bridgeGateway(t);
// Its echo is 24 simulator tokens (every comma counts): past 16, the smallest cap every format accepts.
const LONG = 'a, b, c, d, e, f, g, h, i, j, k, l, m';
const SCHEMA = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'] };

for (const up of ['openai-chat', 'openai-responses', 'gemini'] as const) {
  t.test(`Anthropic Messages → ${up}`, async (t) => {
    const claude = new Anthropic({ apiKey: KEYS[up], baseURL: gw.url, maxRetries: 0 });
    const fault = (value: string) => ({ headers: { 'x-simulator-fault': value } });
    const tools = [{ name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.parameters as Anthropic.Tool.InputSchema }];
    const ask = (content: string) => [{ role: 'user' as const, content }];

    t.test('text, system prompt, the ledger equal to the upstream\'s usage', async (t) => {
      const res = await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, system: 'Be brief.', messages: ask('Hello there') });
      t.strictSame(res.content, [{ type: 'text', text: 'Echo: Hello there' }]);
      t.equal(res.stop_reason, 'end_turn');
      t.equal(res.model, 'claude-sonnet-4-5');
      t.match(SYSTEM_IN_UPSTREAM[up](lastJson(gw, up)), /Be brief\./);
      const rec = await newestRecord(gw, up);
      const usage = await upstreamUsage(gw, up);
      t.strictSame([rec.input_tokens, rec.output_tokens], [usage.input, usage.output]);
      t.equal(res.usage.output_tokens, usage.output);
    });
    t.test('stream: message_start … message_stop, text deltas', async (t) => {
      const stream = claude.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: ask('Hello there') });
      let text = '';
      stream.on('text', (d) => { text += d; });
      const final = await stream.finalMessage();
      t.equal(text, 'Echo: Hello there');
      t.equal(final.stop_reason, 'end_turn');
      t.ok(final.usage.output_tokens > 0);
    });
    t.test('tool call whole and streamed (input_json_delta, accumulated by the SDK), and the result round trip', async (t) => {
      const res = await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, tools, messages: ask('Weather in Paris?') });
      const call = res.content.find((b) => b.type === 'tool_use');
      t.equal(res.stop_reason, 'tool_use');
      t.strictSame(call?.type === 'tool_use' && call.input, { input: 'Weather in Paris?' });
      const stream = claude.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 256, tools, messages: ask('Weather in Paris?') });
      let partial = '';
      stream.on('inputJson', (d) => { partial += d; });
      const final = await stream.finalMessage();
      const streamed = final.content.find((b) => b.type === 'tool_use');
      t.strictSame(streamed?.type === 'tool_use' && streamed.input, { input: 'Weather in Paris?' }, 'parsed from input_json_delta');
      t.strictSame(JSON.parse(partial), { input: 'Weather in Paris?' });
      const back = await claude.messages.create({
        model: 'claude-sonnet-4-5', max_tokens: 256, tools,
        messages: [...ask('Weather in Paris?'), { role: 'assistant', content: res.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.type === 'tool_use' ? call.id : '', content: 'Sunny, 21 C' }] }],
      });
      t.match(back.content[0].type === 'text' && back.content[0].text, /^Tool result: .*Sunny, 21 C/);
    });
    t.test('image input (base64) reaches the upstream in its own image shape', async (t) => {
      await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: [
        { type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL_PNG } }] }] });
      t.match(lastRequest(gw, up).body, IMAGE_IN_UPSTREAM[up]);
    });
    t.test('structured output (output_config.format) reaches the upstream as its own structured-output request', async (t) => {
      const body = { model: 'claude-sonnet-4-5', max_tokens: 256, messages: ask('Say hi'), output_config: { format: { type: 'json_schema', schema: SCHEMA } } };
      const res = await claude.messages.create(body as Anthropic.MessageCreateParamsNonStreaming);
      t.ok(STRUCTURED_IN_UPSTREAM[up](lastJson(gw, up)), JSON.stringify(lastJson(gw, up)).slice(0, 300));
      t.equal(res.content[0]?.type, 'text', 'answered as text, as Anthropic answers a structured request');
    });
    t.test('cut by max_tokens: stop_reason max_tokens, recorded incomplete', async (t) => {
      const res = await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: ask(LONG) });
      t.equal(res.stop_reason, 'max_tokens');
      t.equal((await newestRecord(gw, up)).ending, 'incomplete');
    });
    t.test('count_tokens: the upstream\'s counter, or an estimate marked as one', async (t) => {
      const count = await claude.messages.countTokens({ model: 'claude-sonnet-4-5', system: 'Be brief.', messages: ask('Hello there') });
      t.ok(count.input_tokens > 0);
      t.equal((count as unknown as { estimated?: boolean }).estimated === true, up === 'openai-chat');
    });
    t.test('an upstream 429 is the SDK\'s RateLimitError; a mid-stream failure rejects the stream', async (t) => {
      const limited = await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: ask('hi') }, fault('status=429,retry-after-ms=1')).catch((e) => e);
      t.ok(limited instanceof Anthropic.RateLimitError, String(limited));
      const failed = await claude.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: ask('Hello there friend') }, fault('midstream-error')).finalMessage().catch((e) => e);
      t.ok(failed instanceof Error, String(failed));
      t.equal((await newestRecord(gw, up)).ending, 'failed');
    });
    if (up === 'openai-responses') {
      t.test('thinking from a Responses upstream: shown as thinking, its signature wrapped, never sent to another vendor verbatim', async (t) => {
        const res = await claude.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, tools, messages: ask('Weather in Paris?') });
        const thinking = res.content.find((b) => b.type === 'thinking');
        t.ok(thinking?.type === 'thinking' && thinking.thinking.length > 0, 'a thinking block with text');
        const call = res.content.find((b) => b.type === 'tool_use');
        const next = await claude.messages.create({
          model: 'claude-sonnet-4-5', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, tools,
          messages: [...ask('Weather in Paris?'), { role: 'assistant', content: res.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: call?.type === 'tool_use' ? call.id : '', content: 'Sunny' }] }],
        });
        t.equal(next.stop_reason, 'end_turn', 'the Responses upstream accepted its own reasoning back');
        if (thinking?.type === 'thinking') t.notOk(lastRequest(gw, up).body.includes(thinking.signature), 'the wrapped signature is not what went upstream');
      });
    }
  });
}

for (const up of ['openai-chat', 'openai-responses', 'anthropic-messages'] as const) {
  t.test(`Gemini → ${up}`, async (t) => {
    const genai = new GoogleGenAI({ apiKey: KEYS[up], httpOptions: { baseUrl: gw.url, apiVersion: 'v1beta' } });
    const MODEL = 'gemini-2.5-flash';
    const withFault = (value: string) => ({ httpOptions: { headers: { 'x-simulator-fault': value } } });
    const functionDeclarations = [{ name: WEATHER.name, description: WEATHER.description, parametersJsonSchema: WEATHER.parameters }];

    t.test('text, systemInstruction, the ledger equal to the upstream\'s usage', async (t) => {
      const res = await genai.models.generateContent({ model: MODEL, contents: 'Hello there', config: { systemInstruction: 'Be brief.' } });
      t.equal(res.text, 'Echo: Hello there');
      t.equal(res.candidates?.[0].finishReason, 'STOP');
      t.match(SYSTEM_IN_UPSTREAM[up](lastJson(gw, up)), /Be brief\./);
      const rec = await newestRecord(gw, up);
      const usage = await upstreamUsage(gw, up);
      t.strictSame([rec.input_tokens, rec.output_tokens], [usage.input, usage.output]);
      t.equal(res.usageMetadata?.promptTokenCount, usage.input);
    });
    t.test('stream: chunks to a finishReason', async (t) => {
      let text = '';
      let finish: string | undefined;
      for await (const c of await genai.models.generateContentStream({ model: MODEL, contents: 'Hello there' })) {
        text += c.text ?? '';
        finish = c.candidates?.[0]?.finishReason ?? finish;
      }
      t.equal(text, 'Echo: Hello there');
      t.equal(finish, 'STOP');
    });
    t.test('function call whole and streamed, and the functionResponse round trip', async (t) => {
      const res = await genai.models.generateContent({ model: MODEL, contents: 'Weather in Paris?', config: { tools: [{ functionDeclarations }] } });
      const call = res.functionCalls?.[0];
      t.equal(call?.name, 'get_weather');
      t.strictSame(call?.args, { input: 'Weather in Paris?' });
      const calls = [];
      for await (const c of await genai.models.generateContentStream({ model: MODEL, contents: 'Weather in Paris?', config: { tools: [{ functionDeclarations }] } })) {
        calls.push(...(c.functionCalls ?? []));
      }
      t.strictSame(calls.map((c) => [c.name, c.args]), [['get_weather', { input: 'Weather in Paris?' }]], 'streamed: one whole call');
      const back = await genai.models.generateContent({
        model: MODEL, config: { tools: [{ functionDeclarations }] },
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }, res.candidates![0].content!,
          { role: 'user', parts: [{ functionResponse: { id: call?.id, name: 'get_weather', response: { output: 'Sunny, 21 C' } } }] }],
      });
      t.match(back.text, /^Tool result: .*Sunny, 21 C/);
    });
    t.test('image input (inlineData) reaches the upstream in its own image shape', async (t) => {
      await genai.models.generateContent({ model: MODEL, contents: [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: PIXEL_PNG } }] }] });
      t.match(lastRequest(gw, up).body, IMAGE_IN_UPSTREAM[up]);
    });
    t.test('structured output (responseJsonSchema) reaches the upstream as its own structured-output request', async (t) => {
      const res = await genai.models.generateContent({ model: MODEL, contents: 'Say hi', config: { responseMimeType: 'application/json', responseJsonSchema: SCHEMA } });
      t.ok(STRUCTURED_IN_UPSTREAM[up](lastJson(gw, up)), JSON.stringify(lastJson(gw, up)).slice(0, 300));
      if (up === 'anthropic-messages') t.strictSame(JSON.parse(res.text ?? ''), { input: 'Say hi' });
    });
    t.test('cut by maxOutputTokens: MAX_TOKENS, recorded incomplete', async (t) => {
      const res = await genai.models.generateContent({ model: MODEL, contents: LONG, config: { maxOutputTokens: 16 } });
      t.equal(res.candidates?.[0].finishReason, 'MAX_TOKENS');
      t.equal((await newestRecord(gw, up)).ending, 'incomplete');
    });
    t.test('countTokens: the upstream\'s counter, or an estimate', async (t) => {
      const count = await genai.models.countTokens({ model: MODEL, contents: 'Hello there' });
      t.ok((count.totalTokens ?? 0) > 0);
    });
    t.test('an upstream 429 is an ApiError 429; a mid-stream failure rejects the iteration', async (t) => {
      const limited = await genai.models.generateContent({ model: MODEL, contents: 'hi', config: withFault('status=429,retry-after-ms=1') }).catch((e) => e);
      t.ok(limited instanceof ApiError && limited.status === 429, String(limited));
      const failed = await (async () => {
        for await (const _ of await genai.models.generateContentStream({ model: MODEL, contents: 'Hello there friend', config: withFault('midstream-error') })) { /* read on */ }
      })().catch((e) => e);
      t.ok(failed instanceof Error, String(failed));
      t.equal((await newestRecord(gw, up)).ending, 'failed');
    });
  });
}
