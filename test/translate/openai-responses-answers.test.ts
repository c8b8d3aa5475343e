// The openai-responses codec, answers: every canonical fixture response and stream encoded for a Responses client, and
// an OpenAI upstream's Response objects and event streams decoded back into the fixtures.
import t from 'tap';
import type { CanonResponse } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { failingStream, requests, responses, streams } from './canonical-fixtures.ts';
import {
  codec, ctxFor, decodeAll, encodeAll, eventsOf, FORMAT, functionCall, message, thrown, upstreamResponse, upstreamStream,
} from './openai-responses-helpers.ts';

const ctx = ctxFor(requests.text);
const encrypted = ctxFor(requests.reasoning, { include: ['reasoning.encrypted_content'] });

/** Timestamps are the clock's: masked so bodies compare exactly. */
function timeless(value: any): any {
  if (Array.isArray(value)) return value.map(timeless);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, (k === 'created_at' || k === 'completed_at') && typeof v === 'number' ? 0 : timeless(v)]));
}

const usage = (input: number, output: number, cached = 0, reasoning = 0) =>
  ({ input_tokens: input, input_tokens_details: { cached_tokens: cached }, output_tokens: output, output_tokens_details: { reasoning_tokens: reasoning }, total_tokens: input + output });

t.test('encodeResponse: the text answer, exactly as OpenAI returns a Response', async (t) => {
  t.strictSame(timeless(codec.encodeResponse(responses.text, ctx)), {
    id: 'resp_test', object: 'response', created_at: 0, status: 'completed', completed_at: 0, error: null, incomplete_details: null,
    instructions: null, max_output_tokens: null, model: 'client-model',
    output: [{ id: 'msg_test_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there!', annotations: [], logprobs: [] }] }],
    parallel_tool_calls: true, previous_response_id: null, reasoning: { effort: null, summary: null }, store: true, temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' }, tool_choice: 'auto', tools: [], top_p: 1, truncation: 'disabled',
    usage: usage(12, 4), user: null, metadata: {},
  });
});

t.test('encodeResponse: calls, cuts, filters, cache and reasoning', async (t) => {
  const output = (res: CanonResponse, c = ctx) => (codec.encodeResponse(res, c) as any).output;
  t.strictSame(output(responses.toolCall), [{ id: 'fc_test_0', type: 'function_call', status: 'completed', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
  t.strictSame(output(responses.parallelToolCalls).map((i: any) => [i.type, i.id, i.call_id, i.arguments]), [
    ['message', 'msg_test_0', undefined, undefined],
    ['function_call', 'fc_test_1', 'call_p1', '{"city":"Paris"}'],
    ['function_call', 'fc_test_2', 'call_p2', '{"city":"Rome"}'],
  ]);
  const cut = codec.encodeResponse(responses.cut, ctx) as any;
  t.match(cut, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null });
  const filtered = codec.encodeResponse(responses.filtered, ctx) as any;
  t.match(filtered, { status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] });
  t.strictSame((codec.encodeResponse(responses.cached, ctx) as any).usage, {
    input_tokens: 1200, input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 100 }, output_tokens: 3,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1203,
  }, 'input_tokens includes cache reads and writes, once');
  t.strictSame(output(responses.reasoning, encrypted)[0], {
    id: 'rs_test_0', type: 'reasoning', summary: [{ type: 'summary_text', text: '17 * 23 = 391.' }], encrypted_content: 'gw1:anthropic-messages:sig-abc',
  }, "another provider's signature travels wrapped in encrypted_content");
  t.strictSame(output(responses.reasoning)[0], { id: 'rs_test_0', type: 'reasoning', summary: [{ type: 'summary_text', text: '17 * 23 = 391.' }] },
    'no encrypted_content unless the client included it');
  t.strictSame((codec.encodeResponse(responses.reasoning, encrypted) as any).usage.output_tokens_details, { reasoning_tokens: 50 });
});

t.test('encodeResponse: the id, the model and the echoed request fields', async (t) => {
  const tools = [{ type: 'function', name: 'get_weather', parameters: {}, strict: true }];
  const echoed = codec.encodeResponse(responses.text, ctxFor(requests.text, {
    instructions: 'You are terse.', tools, tool_choice: 'required', temperature: 0.5, max_output_tokens: 256, store: false,
    metadata: { team: 'a' }, previous_response_id: 'resp_prev', reasoning: { effort: 'low' }, text: { format: { type: 'json_object' } },
    prompt_cache_key: 'k1', conversation: 'conv_1',
  })) as any;
  t.match(echoed, {
    instructions: 'You are terse.', tools, tool_choice: 'required', temperature: 0.5, max_output_tokens: 256, store: false,
    metadata: { team: 'a' }, previous_response_id: 'resp_prev', reasoning: { effort: 'low', summary: null },
    text: { format: { type: 'json_object' }, verbosity: 'medium' }, prompt_cache_key: 'k1', conversation: { id: 'conv_1' },
  });
  const minted = codec.encodeResponse(responses.text, { request: requests.text, clientModel: 'mine', defaults: { maxOutputTokens: 1 } }) as any;
  t.match(minted.id, /^resp_[0-9a-f]{48}$/, 'without the bridge\'s id, a fresh one');
  t.match(minted.output[0].id, new RegExp(`^msg_${minted.id.slice(5)}_0$`));
  t.equal(minted.model, 'mine', 'the model the client asked for');
  t.strictSame(codec.encodeCount({ inputTokens: 42 }, ctx), { object: 'response.input_tokens', input_tokens: 42 });
  t.strictSame(codec.encodeCount({ inputTokens: 42, estimated: true }, ctx), { object: 'response.input_tokens', input_tokens: 42, estimated: true });
});

/** Each fixture answer as an OpenAI upstream returns it. */
const upstream: Record<keyof typeof responses, unknown> = {
  text: upstreamResponse([message('msg_1', 'Hi there!')], [12, 4]),
  cached: upstreamResponse([message('msg_1', 'Cached.')], [1200, 3], { usage: { ...usage(1200, 3, 1000), input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 100 } } }),
  toolCall: upstreamResponse([functionCall('fc_1', 'call_9', 'get_weather', '{"city":"Paris"}')], [40, 12]),
  parallelToolCalls: upstreamResponse([
    message('msg_1', 'Let me check.'), functionCall('fc_1', 'call_p1', 'get_weather', '{"city":"Paris"}'), functionCall('fc_2', 'call_p2', 'get_weather', '{"city":"Rome"}'),
  ], [45, 30]),
  cut: upstreamResponse([message('msg_1', 'The answer is a long')], [10, 5], { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }),
  filtered: upstreamResponse([], [10, 0], { status: 'incomplete', incomplete_details: { reason: 'content_filter' } }),
  reasoning: upstreamResponse([
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: '17 * 23 = 391.' }], encrypted_content: 'sig-abc' },
    message('msg_1', '391'),
  ], [20, 60, 0, 50]),
};

/** The fixture as decoded from OpenAI: OpenAI's ids, model and time; reasoning signed (and identified) by OpenAI itself. */
function fromOpenAI(res: CanonResponse, id = 'resp_up', model = 'gpt-5-2025-08-07', created: number | undefined = 1767225600, rsId = 'rs_1'): CanonResponse {
  const content = res.content.map((b) => (b.type === 'reasoning'
    ? { ...b, signature: { format: FORMAT, value: b.signature!.value }, id: { format: FORMAT, value: rsId } }
    : b));
  return { ...res, id, model, content, ...(created === undefined ? {} : { created }) };
}

t.test('decodeResponse: each fixture answer from an OpenAI upstream', async (t) => {
  for (const [name, json] of Object.entries(upstream)) {
    t.strictSame(codec.decodeResponse(json, ctx), fromOpenAI(responses[name as keyof typeof responses]), name);
  }
  t.equal(codec.decodeResponse(upstreamResponse([{ ...message('msg_1', ''), content: [{ type: 'refusal', refusal: 'I cannot help.' }] }], [5, 3]), ctx).stop,
    'content_filter', 'a refusal part is a filtered answer');
  t.match(thrown(() => codec.decodeResponse(upstreamResponse([], [1, 0], { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down' } }), ctx)),
    { status: 429, message: 'Slow down' }, 'a failed Response is an error, not an answer');
  t.strictSame(codec.decodeCount({ object: 'response.input_tokens', input_tokens: 77 }), { inputTokens: 77 });
});

t.test('encodeStream: every fixture stream in the Responses grammar, ending in the whole response', async (t) => {
  for (const [name, { events, response }] of Object.entries(streams)) {
    const c = name === 'reasoning' ? encrypted : ctx;
    const sent = eventsOf(encodeAll(events, c));
    t.strictSame(sent.map((e) => e.sequence_number), sent.map((_, i) => i), `${name}: numbered from 0, every event`);
    t.strictSame(sent.slice(0, 2).map((e) => [e.type, e.response.status, e.response.usage]), [['response.created', 'in_progress', null], ['response.in_progress', 'in_progress', null]]);
    const last = sent.at(-1)!;
    t.equal(last.type, response.stop === 'max_tokens' ? 'response.incomplete' : 'response.completed', `${name}: the terminal event`);
    t.strictSame(timeless(last.response), timeless(codec.encodeResponse(response, c)), `${name}: the terminal response is the whole answer`);
    for (const e of sent.slice(2, -1)) {
      t.equal(typeof e.output_index, 'number', `${name}: ${e.type} has output_index`);
      if (!e.type.startsWith('response.output_item.')) t.equal(typeof e.item_id, 'string', `${name}: ${e.type} has item_id`);
    }
  }
});

t.test('encodeStream: the text stream event by event, zero values present', async (t) => {
  const sent = eventsOf(encodeAll(streams.text.events, ctx));
  t.strictSame(sent.slice(2, -1), [
    { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'msg_test_0', type: 'message', status: 'in_progress', role: 'assistant', content: [] } },
    { type: 'response.content_part.added', sequence_number: 3, item_id: 'msg_test_0', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
    { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_test_0', output_index: 0, content_index: 0, delta: 'Hi ', logprobs: [] },
    { type: 'response.output_text.delta', sequence_number: 5, item_id: 'msg_test_0', output_index: 0, content_index: 0, delta: 'there!', logprobs: [] },
    { type: 'response.output_text.done', sequence_number: 6, item_id: 'msg_test_0', output_index: 0, content_index: 0, text: 'Hi there!', logprobs: [] },
    { type: 'response.content_part.done', sequence_number: 7, item_id: 'msg_test_0', output_index: 0, content_index: 0, part: { type: 'output_text', text: 'Hi there!', annotations: [], logprobs: [] } },
    { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: { id: 'msg_test_0', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there!', annotations: [], logprobs: [] }] } },
  ]);
  const call = eventsOf(encodeAll(streams.toolCall.events, ctx));
  t.strictSame(call[2], { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'fc_test_0', type: 'function_call', status: 'in_progress', call_id: 'call_9', name: 'get_weather', arguments: '' } },
    'a call opens with arguments: "" (Codex refuses the event without it)');
  t.strictSame(call.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta), ['{"ci', 'ty":"Par', 'is"}']);
});

t.test('encodeStream: interleaved parallel calls become whole items, one after the other', async (t) => {
  const sent = eventsOf(encodeAll(streams.parallelToolCalls.events, ctx));
  const items = sent.filter((e) => e.output_index !== undefined).map((e) => `${e.output_index}:${e.type.replace('response.', '')}`);
  t.strictSame(items, [
    '0:output_item.added', '0:content_part.added', '0:output_text.delta', '0:output_text.done', '0:content_part.done', '0:output_item.done',
    '1:output_item.added', '1:function_call_arguments.delta', '1:function_call_arguments.delta', '1:function_call_arguments.done', '1:output_item.done',
    '2:output_item.added', '2:function_call_arguments.delta', '2:function_call_arguments.done', '2:output_item.done',
  ], 'item 2 waits, buffered, until item 1 is done');
});

t.test('encodeStream: reasoning as a summary part, encrypted_content on the finished item', async (t) => {
  const sent = eventsOf(encodeAll(streams.reasoning.events, encrypted));
  t.strictSame(sent.slice(2, 9).map((e) => e.type), [
    'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.delta',
    'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
  ]);
  t.match(sent[3], { item_id: 'rs_test_0', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } });
  t.strictSame(sent[8].item, { id: 'rs_test_0', type: 'reasoning', summary: [{ type: 'summary_text', text: '17 * 23 = 391.' }], encrypted_content: 'gw1:anthropic-messages:sig-abc' });
});

t.test('encodeStream: a failing stream ends with response.failed, never a clean finish', async (t) => {
  const sent = eventsOf(encodeAll(failingStream, ctx));
  const last = sent.at(-1)!;
  t.match(last, { type: 'response.failed', sequence_number: sent.length - 1, response: { id: 'resp_test', status: 'failed', error: { code: 'server_is_overloaded', message: 'Overloaded' }, usage: null } });
  t.notOk(sent.some((e) => e.type === 'response.completed' || e.type === 'error'), 'no completed, no bare error event');
  const cut = eventsOf(encodeAll(failingStream.slice(0, 3), ctx));
  t.equal(cut.at(-1)!.type, 'response.failed', 'an upstream that stopped without finishing is failed at end()');
  const encoder = codec.encodeStream(ctx);
  t.equal(encoder.end().includes('response.created'), true, 'even a stream that never started opens before failing');
});

t.test('decodeStream: what this codec streams to clients decodes back into the fixture (OpenAI grammar both ways)', async (t) => {
  for (const [name, { events, response }] of Object.entries(streams)) {
    const c = name === 'reasoning' ? encrypted : ctx;
    const decoded = collectEvents(decodeAll(encodeAll(events, c), c));
    const expected = {
      ...response, id: 'resp_test', model: 'client-model',
      content: response.content.map((b) => (b.type === 'reasoning' ? { ...b, id: { format: FORMAT, value: 'rs_test_0' } } : b)),
    };
    t.strictSame({ ...decoded, created: undefined }, { ...expected, created: undefined }, name);
  }
});

/** OpenAI's own streams for the fixtures, written as gpt-5 sends them. */
function openaiStream(items: Array<Record<string, any>>, terminal: [string, Record<string, unknown>]): string {
  const events: Array<[string, Record<string, unknown>]> = [['response.created', { response: { ...upstreamResponse([], [0, 0]), status: 'in_progress', usage: null } }]];
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'message') {
      events.push(['response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } }]);
      events.push(['response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }]);
      const text = item.content[0].text as string;
      for (let i = 0; i < text.length; i += 5) events.push(['response.output_text.delta', { item_id, output_index, content_index: 0, delta: text.slice(i, i + 5), obfuscation: 'xx' }]);
      events.push(['response.output_text.done', { item_id, output_index, content_index: 0, text }]);
      events.push(['response.content_part.done', { item_id, output_index, content_index: 0, part: item.content[0] }]);
    } else if (item.type === 'function_call') {
      events.push(['response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } }]);
      for (let i = 0; i < item.arguments.length; i += 4) events.push(['response.function_call_arguments.delta', { item_id, output_index, delta: item.arguments.slice(i, i + 4) }]);
      events.push(['response.function_call_arguments.done', { item_id, output_index, arguments: item.arguments }]);
    } else if (item.type === 'reasoning') {
      events.push(['response.output_item.added', { output_index, item: { id: item_id, type: 'reasoning', summary: [] } }]);
      item.summary.forEach((part: { text: string }, summary_index: number) => {
        events.push(['response.reasoning_summary_part.added', { item_id, output_index, summary_index, part: { type: 'summary_text', text: '' } }]);
        events.push(['response.reasoning_summary_text.delta', { item_id, output_index, summary_index, delta: part.text }]);
        events.push(['response.reasoning_summary_text.done', { item_id, output_index, summary_index, text: part.text }]);
        events.push(['response.reasoning_summary_part.done', { item_id, output_index, summary_index, part: { type: 'summary_text', text: part.text } }]);
      });
    }
    events.push(['response.output_item.done', { output_index, item }]);
  });
  events.push(terminal);
  return upstreamStream(events);
}

t.test('decodeStream: OpenAI streams of each fixture fold into the same answer as the whole Response', async (t) => {
  for (const name of Object.keys(streams) as Array<keyof typeof streams>) {
    const json = upstream[name as keyof typeof upstream] as any;
    const terminal: [string, Record<string, unknown>] = [json.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: json }];
    const events = decodeAll(openaiStream(json.output, terminal), ctx);
    t.strictSame(collectEvents(events), codec.decodeResponse(json, ctx), name);
  }
});

t.test('encodeStream: final() is the response its response.completed carried (what a kept answer must be), once sent', async (t) => {
  const encoder = codec.encodeStream(ctx);
  const events = streams.text.events;
  let text = '';
  for (const e of events.slice(0, -1)) text += encoder.event(e);
  t.equal(encoder.final?.(), undefined, 'nothing final before the finish');
  text += encoder.event(events.at(-1)!) + encoder.end();
  const completed = eventsOf(text).find((e) => e.type === 'response.completed');
  t.ok(completed);
  t.strictSame(encoder.final?.(), completed!.response, 'the same object, times included');
  const failing = codec.encodeStream(ctx);
  failing.event(events[0]);
  failing.end();
  t.equal(failing.final?.(), undefined, 'a failed stream has no final answer to keep');
});
