// The hard cases of translation (docs/translation.md) and the peers' known bugs that touch the Responses
// format, one test each; then errors both ways.
import t from 'tap';
import type { CanonEvent, CanonRequest } from '../../core/canonical.ts';
import { collectEvents } from '../../adapters/shared/collect-events.ts';
import { requests, streams, WEATHER_SCHEMA } from './canonical-fixtures.ts';
import {
  codec, ctxFor, decodeAll, decodeCtx, encodeAll, eventsOf, FORMAT, functionCall, message, thrown, upstreamResponse, upstreamStream,
} from './openai-responses-helpers.ts';

const ctx = ctxFor(requests.text);
const created: [string, Record<string, unknown>] = ['response.created', { response: { id: 'resp_up', model: 'gpt-5', status: 'in_progress', created_at: 1767225600 } }];
const completed = (usage = { input_tokens: 10, output_tokens: 5 }, status = 'completed'): [string, Record<string, unknown>] =>
  [status === 'completed' ? 'response.completed' : 'response.incomplete', { response: { id: 'resp_up', model: 'gpt-5', status, usage } }];
const folded = (text: string, c = ctx) => collectEvents(decodeAll(text, c));
const CALL = { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'get_weather' };

t.test('§4.1 arguments only in function_call_arguments.done are not lost', async (t) => {
  const answer = folded(upstreamStream([
    created,
    ['response.output_item.added', { output_index: 0, item: { ...CALL, status: 'in_progress', arguments: '' } }],
    ['response.function_call_arguments.done', { item_id: 'fc_1', output_index: 0, arguments: '{"city":"Oslo"}' }],
    ['response.output_item.done', { output_index: 0, item: { ...CALL, status: 'completed', arguments: '{"city":"Oslo"}' } }],
    completed(),
  ]));
  t.strictSame(answer.content, [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  t.equal(answer.stop, 'tool_use');
});

t.test('§4.1 arguments only in output_item.done, and items only in the terminal response, are not lost either', async (t) => {
  const onlyDone = folded(upstreamStream([
    created,
    ['response.output_item.done', { output_index: 0, item: { ...CALL, status: 'completed', arguments: '{"city":"Oslo"}' } }],
    completed(),
  ]));
  t.strictSame(onlyDone.content, [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  const onlyTerminal = folded(upstreamStream([
    created,
    ['response.completed', { response: upstreamResponse([message('msg_1', 'Hi'), functionCall('fc_1', 'call_1', 'get_weather', '{}')], [3, 2]) }],
  ]));
  t.strictSame(onlyTerminal.content, [{ type: 'text', text: 'Hi' }, { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{}' }]);
  const textOnlyInDone = folded(upstreamStream([
    created,
    ['response.output_item.added', { output_index: 0, item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }],
    ['response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Whole' }],
    ['response.output_item.done', { output_index: 0, item: message('msg_1', 'Whole') }],
    completed(),
  ]));
  t.strictSame(textOnlyInDone.content, [{ type: 'text', text: 'Whole' }], 'once, not twice');
});

t.test('the terminal events: response.done (Codex backends), [DONE] tolerated, a missing terminal is an error', async (t) => {
  const done = decodeAll(upstreamStream([created, ['response.done', { response: { id: 'resp_up', status: 'completed', usage: { input_tokens: 1, output_tokens: 1 } } }]]) + 'data: [DONE]\n\n', ctx);
  t.strictSame(done.at(-1), { type: 'finish', stop: 'end', usage: { input: 1, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 } });
  const cut = decodeAll(upstreamStream([created, ['response.output_item.added', { output_index: 0, item: { id: 'msg_1', type: 'message', content: [] } }]]), ctx);
  t.match(cut.at(-1), { type: 'error', error: { kind: 'server' } }, 'an upstream that closed early failed');
  t.equal(cut.filter((e) => e.type === 'finish').length, 0);
});

t.test('upstream failures mid-stream: error events (flat and nested) and response.failed', async (t) => {
  const flat = decodeAll(upstreamStream([created, ['error', { code: 'rate_limit_exceeded', message: 'Slow down', param: null }]]), ctx);
  t.match(flat.at(-1), { type: 'error', error: { status: 429, kind: 'rate_limit', message: 'Slow down' } });
  const nested = decodeAll(upstreamStream([created, ['error', { error: { type: 'too_many_requests', code: 'too_many_requests', message: 'Busy' } }]]), ctx);
  t.match(nested.at(-1), { type: 'error', error: { kind: 'rate_limit', message: 'Busy' } });
  const failed = decodeAll(upstreamStream([created, ['response.failed', { response: { id: 'resp_up', status: 'failed', error: { code: 'server_error', message: 'The model crashed' } } }]]), ctx);
  t.match(failed.at(-1), { type: 'error', error: { status: 500, kind: 'server', message: 'The model crashed' } });
  t.equal(failed.filter((e) => e.type === 'error').length, 1, 'one error, nothing after it');
});

t.test('reasoning streams: summary parts join as in the whole item; raw reasoning_text when there is no summary', async (t) => {
  const item = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'First.' }, { type: 'summary_text', text: 'Second.' }], encrypted_content: 'enc' };
  const streamed = folded(upstreamStream([
    created,
    ['response.output_item.added', { output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } }],
    ['response.reasoning_summary_part.added', { item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } }],
    ['response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'First.' }],
    ['response.reasoning_summary_text.done', { item_id: 'rs_1', output_index: 0, summary_index: 0, text: 'First.' }],
    ['response.reasoning_summary_part.added', { item_id: 'rs_1', output_index: 0, summary_index: 1, part: { type: 'summary_text', text: '' } }],
    ['response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 1, delta: 'Sec' }],
    ['response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 1, delta: 'ond.' }],
    ['response.output_item.done', { output_index: 0, item }],
    completed(),
  ]));
  const whole = codec.decodeResponse(upstreamResponse([item], [10, 5]), ctx);
  t.strictSame(streamed.content, whole.content);
  t.strictSame(whole.content, [{ type: 'reasoning', text: 'First.\n\nSecond.', signature: { format: FORMAT, value: 'enc' }, id: { format: FORMAT, value: 'rs_1' } }]);
  const raw = folded(upstreamStream([
    created,
    ['response.output_item.added', { output_index: 0, item: { id: 'rs_2', type: 'reasoning', summary: [] } }],
    ['response.reasoning_text.delta', { item_id: 'rs_2', output_index: 0, content_index: 0, delta: 'thinking ' }],
    ['response.reasoning_text.delta', { item_id: 'rs_2', output_index: 0, content_index: 0, delta: 'aloud' }],
    ['response.output_item.done', { output_index: 0, item: { id: 'rs_2', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'thinking aloud' }] } }],
    completed(),
  ]));
  t.strictSame(raw.content, [{ type: 'reasoning', text: 'thinking aloud', id: { format: FORMAT, value: 'rs_2' } }]);
});

t.test('§4.4 signatures go only to the provider that made them', async (t) => {
  const history = (signature: { format: string; value: string }, id?: string): CanonRequest => ({
    ...requests.text,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Q' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'Because.', signature, ...(id ? { id: { format: FORMAT, value: id } } : {}) }, { type: 'text', text: 'A' }] },
      { role: 'user', content: [{ type: 'text', text: 'Q2' }] },
    ],
  });
  const foreign = codec.encodeRequest(history({ format: 'anthropic-messages', value: 'sig' }), ctx).body as any;
  t.notOk(foreign.input.some((i: any) => i.type === 'reasoning'), 'an Anthropic signature never goes to OpenAI');
  t.notOk('include' in foreign);
  const own = codec.encodeRequest(history({ format: FORMAT, value: 'gAAAA-enc' }, 'rs_9'), ctx).body as any;
  t.strictSame(own.input[1], { type: 'reasoning', id: 'rs_9', summary: [{ type: 'summary_text', text: 'Because.' }], encrypted_content: 'gAAAA-enc' });
  t.strictSame(own.include, ['reasoning.encrypted_content']);
  t.equal(own.store, false, 'replayed from encrypted_content, never looked up in OpenAI\'s store');
});

t.test('§4.4 Anthropic redacted thinking survives a trip through a Responses client as redacted, not as a signature', async (t) => {
  const withInclude = ctxFor(requests.text, { include: ['reasoning.encrypted_content'] });
  const redacted = { format: 'anthropic-messages', value: 'opaque' };
  const item = (codec.encodeResponse({ id: 'x', model: 'm', stop: 'end', usage: { input: 1, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 }, content: [{ type: 'reasoning', text: '', redacted }] }, withInclude) as any).output[0];
  t.strictSame(item, { id: 'rs_test_0', type: 'reasoning', summary: [], encrypted_content: 'gw1:anthropic-messages+redacted:opaque' });
  const back = codec.decodeRequest({ model: 'm', input: [item, { role: 'user', content: 'next' }] }, 'generate', decodeCtx);
  t.strictSame(back.messages[0].content[0], { type: 'reasoning', text: '', redacted, id: { format: FORMAT, value: 'rs_test_0' } });
});

t.test('§4.5 cache tokens counted once: the upstream\'s numbers exactly, and OpenAI semantics to the client', async (t) => {
  const usage = { input_tokens: 2000, input_tokens_details: { cached_tokens: 1536, cache_write_tokens: 64 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 256 }, total_tokens: 2300 };
  t.strictSame(codec.decodeResponse(upstreamResponse([message('m', 'x')], [0, 0], { usage }), ctx).usage, { input: 2000, cacheRead: 1536, cacheWrite: 64, output: 300, reasoning: 256 });
  const client = (codec.encodeResponse({ id: 'x', model: 'm', stop: 'end', content: [], usage: { input: 2000, cacheRead: 1536, cacheWrite: 64, output: 300, reasoning: 256 } }, ctx) as any).usage;
  t.strictSame(client, usage, 'the same numbers back: input includes cached, output includes reasoning, total their sum');
});

t.test('§4.7 Codex pairing: every output item follows the calls of its turn, and results of custom calls stay custom', async (t) => {
  const req: CanonRequest = {
    ...requests.text,
    tools: [{ kind: 'custom', name: 'apply_patch' }, { kind: 'function', name: 'shell', parameters: { type: 'object' } }],
    toolChoice: { type: 'tool', name: 'apply_patch' },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Fix it' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'shell', arguments: '' }, { type: 'tool_call', id: 'c2', name: 'apply_patch', arguments: 'patch', custom: true }] },
      { role: 'user', content: [{ type: 'tool_result', callId: 'c2', content: [{ type: 'text', text: 'ok' }] }, { type: 'tool_result', callId: 'c1', content: [] }] },
    ],
  };
  const body = codec.encodeRequest(req, ctxFor(req)).body as any;
  t.strictSame(body.input.slice(1).map((i: any) => [i.type, i.call_id]), [['function_call', 'c1'], ['custom_tool_call', 'c2'], ['custom_tool_call_output', 'c2'], ['function_call_output', 'c1']]);
  t.equal(body.input[1].arguments, '{}', 'a call without arguments sends an empty object, not an empty string');
  t.strictSame(body.tool_choice, { type: 'custom', name: 'apply_patch' });
  t.strictSame(body.tools[0], { type: 'custom', name: 'apply_patch' });
});

t.test('§4.11 stream state is per request: two encoders interleaved keep their own numbering and items', async (t) => {
  const a = codec.encodeStream(ctxFor(requests.text, { responseId: 'resp_a' }));
  const b = codec.encodeStream(ctxFor(requests.text, { responseId: 'resp_b' }));
  let outA = '';
  let outB = '';
  for (const e of streams.text.events) { outA += a.event(e); outB += b.event(e); }
  outA += a.end();
  outB += b.end();
  t.strictSame(eventsOf(outA).map((e) => e.sequence_number), eventsOf(outB).map((e) => e.sequence_number));
  t.equal(eventsOf(outA).at(-1)!.response.id, 'resp_a');
  t.equal(eventsOf(outB).at(-1)!.response.output[0].id, 'msg_b_0');
});

t.test('§3 tool names past 64 characters are shortened for OpenAI and restored in answers, whole and streamed', async (t) => {
  const long = `mcp__${'very_long_server_name_'.repeat(3)}__search_documents`;
  const req: CanonRequest = { ...requests.text, tools: [{ kind: 'function', name: long, parameters: WEATHER_SCHEMA }], toolChoice: { type: 'tool', name: long } };
  const body = codec.encodeRequest(req, ctxFor(req)).body as any;
  const fitted = body.tools[0].name as string;
  t.ok(fitted.length <= 64 && fitted !== long);
  t.strictSame(body.tool_choice, { type: 'function', name: fitted });
  const c = ctxFor(req);
  t.equal((codec.decodeResponse(upstreamResponse([functionCall('fc_1', 'call_1', fitted, '{}')], [1, 1]), c).content[0] as any).name, long);
  const streamed = folded(upstreamStream([
    created,
    ['response.output_item.added', { output_index: 0, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: fitted, arguments: '' } }],
    ['response.output_item.done', { output_index: 0, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: fitted, arguments: '{}' } }],
    completed(),
  ]), c);
  t.equal((streamed.content[0] as any).name, long);
});

t.test('§3 images inside tool results move to a user message right after the outputs', async (t) => {
  const png = { kind: 'base64' as const, mediaType: 'image/png', data: 'AAAA' };
  const req: CanonRequest = {
    ...requests.toolRoundTrip,
    messages: [
      ...requests.toolRoundTrip.messages.slice(0, 2),
      { role: 'user', content: [{ type: 'tool_result', callId: 'call_1', content: [{ type: 'text', text: 'a chart' }, { type: 'image', source: png }] }, { type: 'text', text: 'Explain' }] },
    ],
  };
  const input = (codec.encodeRequest(req, ctxFor(req)).body as any).input;
  t.strictSame(input.slice(2), [
    { type: 'function_call_output', call_id: 'call_1', output: 'a chart' },
    { role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }, { type: 'input_text', text: 'Explain' }] },
  ]);
});

t.test('§3 system prompts: instructions then leading developer/system items are the system prompt; later ones stay in place', async (t) => {
  const req = codec.decodeRequest({
    model: 'm', instructions: 'Rules.',
    input: [{ role: 'system', content: 'Sys.' }, { role: 'developer', content: [{ type: 'input_text', text: 'Dev.' }] }, { role: 'user', content: 'Hi' }, { role: 'developer', content: 'Later.' }],
  }, 'generate', decodeCtx);
  t.strictSame(req.system.map((b) => b.text), ['Rules.', 'Sys.', 'Dev.']);
  t.strictSame(req.messages.map((m) => m.role), ['user', 'system']);
});

t.test('what only OpenAI can run is refused with a clear 400', async (t) => {
  const refused = (body: Record<string, unknown>, param: string, words: RegExp) => {
    const err = thrown(() => codec.decodeRequest({ model: 'm', input: 'x', ...body }, 'generate', decodeCtx));
    t.match(err, { status: 400, param, message: words }, param);
  };
  refused({ tool_choice: { type: 'file_search' } }, 'tool_choice.type', /built-in tool 'file_search'/);
  refused({ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]', /item_reference/);
  refused({ input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] }, 'input[0].type', /built-in tool/);
  refused({ background: true }, 'background', /Background/);
  refused({ prompt: { id: 'pmpt_1' } }, 'prompt', /Prompt templates/);
});

t.test('declared built-in tools are left out (Codex declares web_search); a namespace\'s tools are declared one by one', async (t) => {
  const req = codec.decodeRequest({
    model: 'm', input: 'x',
    tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }, { type: 'web_search', external_web_access: false },
      { type: 'mcp', server_label: 'x' },
      { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents', tools: [{ type: 'function', name: 'close_agent', parameters: { type: 'object' } }, { type: 'custom', name: 'spawn' }] }],
  }, 'generate', decodeCtx);
  t.strictSame(req.tools.map((tool) => [tool.kind, tool.name]), [['function', 'exec_command'], ['function', 'close_agent'], ['custom', 'spawn']]);
  const nested = thrown(() => codec.decodeRequest({ model: 'm', input: 'x', tools: [{ type: 'namespace', name: 'a', tools: [{ type: 'namespace', name: 'b', tools: [] }] }] }, 'generate', decodeCtx));
  t.match(nested, { status: 400, param: 'tools[0].tools[0].type' });
});

t.test('allowed_tools narrows the declared tools', async (t) => {
  const req = codec.decodeRequest({
    model: 'm', input: 'x',
    tools: [{ type: 'function', name: 'a', parameters: {} }, { type: 'function', name: 'b', parameters: {} }, { type: 'custom', name: 'c' }],
    tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }, { type: 'custom', name: 'c' }] },
  }, 'generate', decodeCtx);
  t.strictSame(req.tools.map((tool) => tool.name), ['b', 'c']);
  t.strictSame(req.toolChoice, { type: 'required' });
});

t.test('parameters: n refused, the output cap at least 16, temperature clamped, long user ids hashed, budgets as effort', async (t) => {
  const encode = (over: Partial<CanonRequest>) => codec.encodeRequest({ ...requests.text, ...over }, ctx).body as any;
  t.match(thrown(() => encode({ n: 2 })), { status: 400, param: 'n' });
  t.equal(encode({ maxOutputTokens: 5 }).max_output_tokens, 16);
  const toolless = encode({ toolChoice: { type: 'none' }, parallelToolCalls: false });
  t.notOk('tool_choice' in toolless || 'parallel_tool_calls' in toolless, 'no tool choice or parallel switch without tools');
  t.equal(encode({ temperature: 2.5 }).temperature, 2);
  const claudeCodeUser = `user_${'a'.repeat(64)}_account__session_0b7f5e1c-5c0f-4d2e-9d8b-1f2e3d4c5b6a`;
  t.match(encode({ user: claudeCodeUser }).safety_identifier, /^[0-9a-f]{64}$/);
  t.equal(encode({ user: 'u-1' }).safety_identifier, 'u-1');
  t.strictSame(encode({ reasoning: { enabled: true, budgetTokens: 8000, show: true } }).reasoning, { effort: 'medium', summary: 'auto' });
  t.strictSame(encode({ reasoning: { enabled: true, effort: 'max' } }).reasoning, { effort: 'xhigh' });
  t.notOk('reasoning' in encode({ reasoning: { enabled: false } }), 'reasoning off: none asked');
  t.match(thrown(() => encode({ messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'file', format: 'gemini', id: 'files/abc' } }] }] })),
    { status: 400, message: /uploaded to gemini/ });
  const file = encode({ messages: [{ role: 'user', content: [{ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' } }] }] });
  t.strictSame(file.input[0].content[0], { type: 'input_file', filename: 'file.pdf', file_data: 'data:application/pdf;base64,JVBE' });
});

t.test('input parts decode: files by data, id and URL; images by id; refusals as text', async (t) => {
  const req = codec.decodeRequest({
    model: 'm',
    input: [
      {
        role: 'user', content: [
          { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' },
          { type: 'input_file', filename: 'b.pdf', file_data: 'JVBE' },
          { type: 'input_file', file_id: 'file-1' },
          { type: 'input_file', file_url: 'https://example.com/c.pdf' },
          { type: 'input_image', file_id: 'file-2', detail: 'high' },
        ],
      },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
    ],
  }, 'generate', decodeCtx);
  t.strictSame(req.messages[0].content, [
    { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' }, filename: 'a.pdf' },
    { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBE' }, filename: 'b.pdf' },
    { type: 'file', source: { kind: 'file', format: FORMAT, id: 'file-1' } },
    { type: 'file', source: { kind: 'url', url: 'https://example.com/c.pdf' } },
    { type: 'image', source: { kind: 'file', format: FORMAT, id: 'file-2' }, detail: 'high' },
  ]);
  t.strictSame(req.messages[1].content, [{ type: 'text', text: 'No.' }]);
});

t.test('errors to a Responses client: OpenAI\'s envelope, status and code per kind', async (t) => {
  t.strictSame(codec.encodeError({ status: 429, kind: 'rate_limit', message: 'Too many', retryAfter: '7' }), {
    status: 429, body: { error: { message: 'Too many', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' } }, headers: { 'retry-after': '7' },
  });
  t.match(codec.encodeError({ status: 529, kind: 'overloaded', message: 'Overloaded', code: 'overloaded_error' }), { status: 503, body: { error: { type: 'server_error', code: 'server_is_overloaded' } } },
    '529 is no OpenAI status; another provider\'s code is replaced by OpenAI\'s');
  t.match(codec.encodeError({ status: 400, kind: 'invalid_request', message: 'prompt is too long' }), { status: 400, body: { error: { message: 'prompt is too long', type: 'invalid_request_error', code: null } } });
  t.match(codec.encodeError({ status: 400, kind: 'invalid_request', message: 'too long', code: 'context_length_exceeded' }), { body: { error: { code: 'context_length_exceeded' } } },
    'a code OpenAI itself uses (Codex compacts on it) is kept');
  t.match(codec.encodeError({ status: 402, kind: 'billing', message: 'Pay up' }), { status: 429, body: { error: { code: 'insufficient_quota' } } });
  t.match(codec.encodeError({ status: 401, kind: 'authentication', message: 'Bad key' }), { status: 401, body: { error: { code: 'invalid_api_key' } } });
});

t.test('errors from an OpenAI upstream: kinds by code first, then status', async (t) => {
  const body = (code: string | null, message: string, type = 'invalid_request_error') => JSON.stringify({ error: { message, type, param: null, code } });
  t.strictSame(codec.decodeError(429, body('insufficient_quota', 'Out of credit', 'insufficient_quota')), { status: 429, kind: 'billing', message: 'Out of credit', code: 'insufficient_quota' });
  t.match(codec.decodeError(429, body('rate_limit_exceeded', 'Slow', 'tokens')), { kind: 'rate_limit' });
  t.match(codec.decodeError(401, body('invalid_api_key', 'Bad key')), { kind: 'authentication', message: 'Bad key' });
  t.match(codec.decodeError(400, body('context_length_exceeded', 'Too long')), { kind: 'invalid_request', code: 'context_length_exceeded' });
  t.match(codec.decodeError(503, body(null, 'Busy', 'server_error')), { kind: 'overloaded' });
  t.match(codec.decodeError(404, body('model_not_found', 'No such model')), { kind: 'not_found' });
  t.strictSame(codec.decodeError(502, '<html>Bad gateway</html>'), { status: 502, kind: 'server', message: '<html>Bad gateway</html>' });
});

t.test('a stream whose only block is an image by URL sends no item for it, and still completes', async (t) => {
  const events: CanonEvent[] = [
    { type: 'start', id: 'x', model: 'm' },
    { type: 'block_start', index: 0, block: { type: 'whole', block: { type: 'image', source: { kind: 'url', url: 'https://x/y.png' } } } },
    { type: 'block_start', index: 1, block: { type: 'whole', block: { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } } } },
    { type: 'finish', stop: 'end' },
  ];
  const sent = eventsOf(encodeAll(events, ctx));
  t.strictSame(sent.at(-1)!.response.output, [{ id: 'ig_test_0', type: 'image_generation_call', status: 'completed', result: 'AAAA' }]);
  t.strictSame(sent.map((e) => e.type), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
});
