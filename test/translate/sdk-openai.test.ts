// The official openai SDK as the client of translated pairs: chat completions and Responses against each upstream format
// that is not their own, on strict single-format simulators. Per pair: text, stream, tool call whole and streamed
// through the SDK's own accumulation helper, tool result round trip, system prompt, image input, structured output,
// the output cap, an upstream 429 and a mid-stream failure as the SDK's own errors, and the ledger = upstream usage.
import t from 'tap';
import OpenAI from 'openai';
import { bridgeGateway, KEYS, type UpstreamFormat } from './bridge-config.ts';
import { IMAGE_IN_UPSTREAM, lastJson, lastRequest, newestRecord, PIXEL_PNG, STRUCTURED_IN_UPSTREAM, SYSTEM_IN_UPSTREAM, upstreamUsage, WEATHER } from './sdk-helpers.ts';

const gw = await bridgeGateway(t);
const client = (up: UpstreamFormat) => new OpenAI({ apiKey: KEYS[up], baseURL: `${gw.url}/v1`, maxRetries: 0 });
const fault = (value: string) => ({ headers: { 'x-simulator-fault': value } });
const tools = [{ type: 'function' as const, function: WEATHER }];
// Its echo is 24 simulator tokens (every comma counts): past 16, the smallest cap every format accepts.
const LONG = 'a, b, c, d, e, f, g, h, i, j, k, l, m';
const SCHEMA = { name: 'answer', strict: true, schema: { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'], additionalProperties: false } };

for (const up of ['anthropic-messages', 'gemini', 'openai-responses'] as const) {
  t.test(`chat completions → ${up}`, async (t) => {
    const openai = client(up);
    t.test('text, system prompt, and the ledger equal to the upstream\'s usage', async (t) => {
      const res = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }] });
      t.equal(res.choices[0].message.content, 'Echo: Hello there');
      t.equal(res.choices[0].finish_reason, 'stop');
      t.equal(res.model, 'gpt-5');
      t.match(SYSTEM_IN_UPSTREAM[up](lastJson(gw, up)), /Be brief\./, 'the system prompt in the upstream\'s place');
      const rec = await newestRecord(gw, up);
      const usage = await upstreamUsage(gw, up);
      t.strictSame([rec.input_tokens, rec.output_tokens], [usage.input, usage.output]);
      t.strictSame([res.usage?.prompt_tokens, res.usage?.completion_tokens], [usage.input, usage.output], 'the client sees the same counts');
    });
    t.test('stream with include_usage', async (t) => {
      const stream = await openai.chat.completions.create({ model: 'gpt-5', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello there' }] });
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const c of stream) {
        text += c.choices[0]?.delta.content ?? '';
        finish = c.choices[0]?.finish_reason ?? finish;
        if (c.usage) usage = c.usage;
      }
      t.equal(text, 'Echo: Hello there');
      t.equal(finish, 'stop');
      t.ok(usage && usage.prompt_tokens > 0 && usage.completion_tokens > 0);
      t.equal((await newestRecord(gw, up)).ending, 'completed');
    });
    t.test('tool call whole, streamed through the SDK helper, and the result round trip', async (t) => {
      const res = await openai.chat.completions.create({ model: 'gpt-5', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      const call = res.choices[0].message.tool_calls?.[0];
      t.equal(res.choices[0].finish_reason, 'tool_calls');
      t.equal(call?.type === 'function' && call.function.name, 'get_weather');
      t.strictSame(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}'), { input: 'Weather in Paris?' });
      const runner = openai.chat.completions.stream({ model: 'gpt-5', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      const final = await runner.finalChatCompletion();
      const streamed = final.choices[0].message.tool_calls?.[0];
      t.equal(streamed?.type === 'function' && streamed.function.name, 'get_weather', 'the SDK accumulated the streamed call');
      t.strictSame(JSON.parse(streamed?.type === 'function' ? streamed.function.arguments : '{}'), { input: 'Weather in Paris?' });
      const back = await openai.chat.completions.create({
        model: 'gpt-5', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }, res.choices[0].message,
          { role: 'tool', tool_call_id: call!.id, content: 'Sunny, 21 C' }],
      });
      // Gemini's functionResponse is an object: the text travels as { content } (docs/translation.md).
      t.match(back.choices[0].message.content, /^Tool result: .*Sunny, 21 C/, 'the strict upstream accepted the result for its call');
    });
    t.test('image input (base64) reaches the upstream in its own image shape', async (t) => {
      const res = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL_PNG}` } }] }] });
      t.equal(res.choices[0].message.content, 'Echo: What is this?');
      t.match(lastRequest(gw, up).body, IMAGE_IN_UPSTREAM[up]);
    });
    t.test('structured output reaches the upstream as its own structured-output request', async (t) => {
      const res = await openai.chat.completions.create({ model: 'gpt-5', response_format: { type: 'json_schema', json_schema: SCHEMA }, messages: [{ role: 'user', content: 'Say hi' }] });
      t.ok(STRUCTURED_IN_UPSTREAM[up](lastJson(gw, up)), JSON.stringify(lastJson(gw, up)).slice(0, 300));
      if (up === 'anthropic-messages') t.strictSame(JSON.parse(res.choices[0].message.content ?? ''), { input: 'Say hi' }, 'the forced tool\'s input is the JSON answer');
      t.equal(res.choices[0].finish_reason, 'stop');
    });
    t.test('cut by max_tokens: finish_reason length, recorded incomplete', async (t) => {
      const res = await openai.chat.completions.create({ model: 'gpt-5', max_completion_tokens: 16, messages: [{ role: 'user', content: LONG }] });
      t.equal(res.choices[0].finish_reason, 'length');
      t.equal((await newestRecord(gw, up)).ending, 'incomplete');
    });
    t.test('an upstream 429 is the SDK\'s RateLimitError; a mid-stream failure an error while iterating', async (t) => {
      const limited = await openai.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }, fault('status=429,retry-after-ms=1')).catch((e) => e);
      t.ok(limited instanceof OpenAI.RateLimitError, String(limited));
      const stream = await openai.chat.completions.create({ model: 'gpt-5', stream: true, messages: [{ role: 'user', content: 'Hello there friend' }] }, fault('midstream-error'));
      let text = '';
      const err = await (async () => { for await (const c of stream) text += c.choices[0]?.delta.content ?? ''; })().catch((e) => e);
      t.ok(err instanceof Error, `iterating threw: ${String(err)}`);
      t.ok(text.length > 0, 'some text arrived first');
      t.equal((await newestRecord(gw, up)).ending, 'failed');
    });
  });
}

for (const up of ['anthropic-messages', 'gemini', 'openai-chat'] as const) {
  t.test(`Responses → ${up}`, async (t) => {
    const openai = client(up);
    const rtools = [{ type: 'function' as const, name: WEATHER.name, description: WEATHER.description, parameters: WEATHER.parameters, strict: false }];
    t.test('text, instructions, and the ledger equal to the upstream\'s usage', async (t) => {
      const res = await openai.responses.create({ model: 'gpt-5', instructions: 'Be brief.', input: 'Hello there' });
      t.equal(res.output_text, 'Echo: Hello there');
      t.equal(res.status, 'completed');
      t.match(SYSTEM_IN_UPSTREAM[up](lastJson(gw, up)), /Be brief\./);
      const rec = await newestRecord(gw, up);
      const usage = await upstreamUsage(gw, up);
      t.strictSame([rec.input_tokens, rec.output_tokens], [usage.input, usage.output]);
      t.strictSame([res.usage?.input_tokens, res.usage?.output_tokens], [usage.input, usage.output]);
    });
    t.test('stream: created … completed, numbered', async (t) => {
      const stream = await openai.responses.create({ model: 'gpt-5', input: 'Hello there', stream: true });
      let text = '';
      const seq: number[] = [];
      let last = '';
      for await (const e of stream) {
        seq.push(e.sequence_number);
        if (e.type === 'response.output_text.delta') text += e.delta;
        last = e.type;
      }
      t.equal(text, 'Echo: Hello there');
      t.equal(last, 'response.completed');
      t.strictSame(seq, seq.map((_, i) => i), 'sequence numbers from 0, in order');
    });
    t.test('tool call whole, streamed through the SDK helper, and the result round trip', async (t) => {
      const res = await openai.responses.create({ model: 'gpt-5', tools: rtools, input: 'Weather in Paris?' });
      const call = res.output.find((o) => o.type === 'function_call');
      t.equal(call?.type === 'function_call' && call.name, 'get_weather');
      const final = await openai.responses.stream({ model: 'gpt-5', tools: rtools, input: 'Weather in Paris?' }).finalResponse();
      const streamed = final.output.find((o) => o.type === 'function_call');
      t.strictSame(streamed?.type === 'function_call' && JSON.parse(streamed.arguments), { input: 'Weather in Paris?' }, 'accumulated by the SDK');
      const back = await openai.responses.create({
        model: 'gpt-5', tools: rtools, store: false,
        input: [{ role: 'user', content: 'Weather in Paris?' }, ...(res.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: call?.type === 'function_call' ? call.call_id : '', output: 'Sunny, 21 C' }],
      });
      t.match(back.output_text, /^Tool result: .*Sunny, 21 C/);
    });
    t.test('image input (base64) reaches the upstream in its own image shape', async (t) => {
      const res = await openai.responses.create({ model: 'gpt-5', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${PIXEL_PNG}` }] }] });
      t.equal(res.output_text, 'Echo: What is this?');
      t.match(lastRequest(gw, up).body, IMAGE_IN_UPSTREAM[up]);
    });
    t.test('structured output reaches the upstream as its own structured-output request', async (t) => {
      const res = await openai.responses.create({ model: 'gpt-5', text: { format: { type: 'json_schema', ...SCHEMA } }, input: 'Say hi' });
      t.ok(STRUCTURED_IN_UPSTREAM[up](lastJson(gw, up)));
      if (up === 'anthropic-messages') t.strictSame(JSON.parse(res.output_text), { input: 'Say hi' });
    });
    t.test('cut by max_output_tokens: status incomplete', async (t) => {
      const res = await openai.responses.create({ model: 'gpt-5', max_output_tokens: 16, input: LONG });
      t.equal(res.status, 'incomplete');
      t.equal(res.incomplete_details?.reason, 'max_output_tokens');
    });
    t.test('an upstream 429 is the SDK\'s RateLimitError; a mid-stream failure ends the stream with response.failed', async (t) => {
      const limited = await openai.responses.create({ model: 'gpt-5', input: 'hi' }, fault('status=429,retry-after-ms=1')).catch((e) => e);
      t.ok(limited instanceof OpenAI.RateLimitError, String(limited));
      const stream = await openai.responses.create({ model: 'gpt-5', input: 'Hello there friend', stream: true }, fault('midstream-error'));
      const types: string[] = [];
      const err = await (async () => { for await (const e of stream) types.push(e.type); })().catch((e) => e);
      t.ok(types.includes('response.failed') || err instanceof Error, `failed: ${types.at(-1)} ${String(err)}`);
      t.notOk(types.includes('response.completed'));
      t.equal((await newestRecord(gw, up)).ending, 'failed');
    });
  });
}
