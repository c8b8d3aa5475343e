// The official openai SDK takes what the Responses codec gives a client: a tiny local server decodes the SDK's own
// request with the codec, answers with the codec's Response object or event stream, and the SDK's objects and stream
// accumulator (responses.stream().finalResponse()) must hold the expected text, calls, parsed arguments and usage.
import OpenAI from 'openai';
import t from 'tap';
import type { CanonEvent, CanonResponse, CodecContext } from '../../core/canonical.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { failingStream, responses, streams, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import { codec, encodeAll, FORMAT } from './openai-responses-helpers.ts';

interface Answer { response?: CanonResponse; events?: CanonEvent[]; count?: number }

/** An OpenAI client whose server answers every request through the codec; `seen` collects the decoded requests. */
async function serve(t: Parameters<typeof startUpstream>[0], answer: Answer) {
  const seen: CodecContext[] = [];
  const upstream = await startUpstream(t, (req, res, exchange) => {
    const counting = exchange.url.endsWith('/input_tokens');
    const request = codec.decodeRequest(JSON.parse(exchange.body), counting ? 'count_tokens' : 'generate', { model: 'model-x', path: exchange.url, query: '' });
    request.extras[FORMAT] = { ...request.extras[FORMAT], responseId: 'resp_sdk' };
    const ctx: CodecContext = { request, clientModel: 'client-model', defaults: { maxOutputTokens: 4096 } };
    seen.push(ctx);
    if (request.stream) {
      res.writeHead(200, { 'content-type': codec.streamContentType(request) });
      res.end(encodeAll(answer.events!, ctx));
      return;
    }
    const body = counting ? codec.encodeCount({ inputTokens: answer.count! }, ctx) : codec.encodeResponse(answer.response!, ctx);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  return { client: new OpenAI({ apiKey: 'sk-test', baseURL: `${upstream.url}/v1`, maxRetries: 0 }), seen };
}

const weather = { type: 'function' as const, name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_SCHEMA, strict: true };
const usage = (input: number, output: number, reasoning = 0) => ({
  input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: reasoning }, total_tokens: input + output,
});

t.test('responses.create: text, with usage and the client model', async (t) => {
  const { client, seen } = await serve(t, { response: responses.text });
  const res = await client.responses.create({ model: 'client-model', instructions: 'You are terse.', input: 'Hello there' });
  t.equal(res.output_text, 'Hi there!');
  t.equal(res.id, 'resp_sdk');
  t.equal(res.model, 'client-model');
  t.equal(res.status, 'completed');
  t.strictSame(res.usage, usage(12, 4));
  t.strictSame(seen[0].request.system, [{ type: 'text', text: 'You are terse.' }], 'the SDK\'s request decoded');
});

t.test('responses.parse: a call, its arguments parsed by the SDK', async (t) => {
  const { client } = await serve(t, { response: responses.toolCall });
  const res = await client.responses.parse({ model: 'client-model', input: 'Weather in Paris?', tools: [weather] });
  const call = res.output[0];
  t.equal(call.type, 'function_call');
  if (call.type !== 'function_call') return;
  t.match(call, { call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}', parsed_arguments: { city: 'Paris' } });
  t.strictSame(res.usage, usage(40, 12));
});

t.test('responses.create: a cut answer is incomplete', async (t) => {
  const { client } = await serve(t, { response: responses.cut });
  const res = await client.responses.create({ model: 'client-model', input: 'Go on', max_output_tokens: 16 });
  t.equal(res.status, 'incomplete');
  t.strictSame(res.incomplete_details, { reason: 'max_output_tokens' });
  t.equal(res.output_text, 'The answer is a long');
});

t.test('responses.inputTokens.count', async (t) => {
  const { client, seen } = await serve(t, { count: 9 });
  const res = await client.responses.inputTokens.count({ model: 'client-model', input: 'Hello there' });
  t.equal(res.input_tokens, 9);
  t.equal(seen[0].request.operation, 'count_tokens');
});

t.test('responses.stream: text deltas and the final response', async (t) => {
  const { client } = await serve(t, { events: streams.text.events });
  const stream = client.responses.stream({ model: 'client-model', input: 'Hello there' });
  const deltas: string[] = [];
  stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
  const final = await stream.finalResponse();
  t.strictSame(deltas, ['Hi ', 'there!']);
  t.equal(final.output_text, 'Hi there!');
  t.equal(final.status, 'completed');
  t.strictSame(final.usage, usage(12, 4));
});

t.test('responses.stream: interleaved parallel calls accumulate into two whole calls with parsed arguments', async (t) => {
  const { client } = await serve(t, { events: streams.parallelToolCalls.events });
  const stream = client.responses.stream({ model: 'client-model', input: 'Weather in Paris and Rome?', tools: [weather] });
  const argumentDeltas: Array<[number, string]> = [];
  stream.on('response.function_call_arguments.delta', (e) => argumentDeltas.push([e.output_index, e.delta]));
  const final = await stream.finalResponse();
  t.equal(final.output_text, 'Let me check.');
  const calls = final.output.filter((i) => i.type === 'function_call');
  t.strictSame(calls.map((c) => [c.call_id, c.name, c.arguments, c.parsed_arguments]), [
    ['call_p1', 'get_weather', '{"city":"Paris"}', { city: 'Paris' }],
    ['call_p2', 'get_weather', '{"city":"Rome"}', { city: 'Rome' }],
  ]);
  t.strictSame(argumentDeltas, [[1, '{"city":'], [1, '"Paris"}'], [2, '{"city":"Rome"}']]);
  t.strictSame(final.usage, usage(45, 30));
});

t.test('responses.stream: one streamed call, arguments from the fragments', async (t) => {
  const { client } = await serve(t, { events: streams.toolCall.events });
  const final = await client.responses.stream({ model: 'client-model', input: 'Weather?', tools: [weather] }).finalResponse();
  t.match(final.output, [{ type: 'function_call', call_id: 'call_9', arguments: '{"city":"Paris"}', parsed_arguments: { city: 'Paris' } }]);
});

t.test('responses.stream: reasoning summary and encrypted_content', async (t) => {
  const { client } = await serve(t, { events: streams.reasoning.events });
  const stream = client.responses.stream({ model: 'client-model', input: 'What is 17 * 23?', reasoning: { effort: 'high', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false });
  const summary: string[] = [];
  stream.on('response.reasoning_summary_text.delta', (e) => summary.push(e.delta));
  const final = await stream.finalResponse();
  t.strictSame(summary, ['17 * 23 ', '= 391.']);
  t.match(final.output[0], { type: 'reasoning', summary: [{ type: 'summary_text', text: '17 * 23 = 391.' }], encrypted_content: 'gw1:anthropic-messages:sig-abc' });
  t.equal(final.output_text, '391');
  t.equal(final.usage?.output_tokens_details.reasoning_tokens, 50);
});

t.test('responses.stream: a cut stream ends incomplete', async (t) => {
  const { client } = await serve(t, { events: streams.cut.events });
  const final = await client.responses.stream({ model: 'client-model', input: 'Go on' }).finalResponse();
  t.equal(final.status, 'incomplete');
  t.strictSame(final.incomplete_details, { reason: 'max_output_tokens' });
  t.equal(final.output_text, 'The answer is a long');
});

t.test('responses.stream: a failed stream is a failure the SDK reports, never a completed response', async (t) => {
  const { client } = await serve(t, { events: failingStream });
  const stream = client.responses.stream({ model: 'client-model', input: 'Hi' });
  const failed: unknown[] = [];
  stream.on('response.failed', (e) => failed.push(e.response.error));
  const final = await stream.finalResponse();
  t.strictSame(failed, [{ code: 'server_is_overloaded', message: 'Overloaded' }]);
  t.equal(final.status, 'failed', 'the SDK\'s final snapshot is the failed response');
  t.match(final.output, [{ type: 'message', content: [{ type: 'output_text', text: 'Partial' }] }], 'with what had arrived');
});
