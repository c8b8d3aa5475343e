// How each format says an answer was cut by its output cap (incomplete), and how much answer text a stream relayed (for
// billing a stream the client left early): FormatAdapter.incomplete, StreamScanner.incomplete and StreamScanner.streamed.
import t from 'tap';
import { anthropicMessages } from '../../adapters/anthropic-messages/index.ts';
import { gemini } from '../../adapters/gemini/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { openaiImages } from '../../adapters/openai-images/index.ts';
import { openaiResponses } from '../../adapters/openai-responses/index.ts';
import { jsonKey, textCounter } from '../../adapters/shared/stream-json.ts';
import { fakeCtx, scan, sse } from './helpers.ts';

t.test('textCounter: string values under the keys, escapes decoded, spacing tolerated, look-alikes ignored', async (t) => {
  const stringChars = (data: string, keys: string[]) => textCounter(keys)(data);
  t.equal(stringChars('{"delta":{"content":"Hello"}}', ['content']), 5);
  t.equal(stringChars('{"a":{"content":"Hel"},"b":{"content":"lo!"}}', ['content']), 6, 'every occurrence');
  t.equal(stringChars('{"parts": [{"text": "It\'s"}, {"text" :  "ok"}]}', ['text']), 6, 'Google spacing');
  t.equal(stringChars(JSON.stringify({ content: 'He said "hi"\n\u00e9\\' }), ['content']), 15, 'escapes count as the character they stand for');
  t.equal(stringChars('{"content":"\\u00e9t\\u00e9"}', ['content']), 3, '\\u escapes are one character');
  t.equal(stringChars('{"content":null,"tool_calls":[{"function":{"arguments":"{\\"a\\":1}"}}]}', ['content', 'arguments']), 7, 'null skipped, arguments counted');
  t.equal(stringChars(JSON.stringify({ text: 'say "content":"nothing"' }), ['content']), 0, 'a key named inside a string is not a key');
  t.equal(stringChars('{"reasoning_content":"abc","content":""}', ['content']), 0, 'a longer key ending in the name is another key');
  t.equal(stringChars('{"content":"cut off', ['content']), 0, 'an unterminated value (not a whole frame) counts nothing');
  t.equal(stringChars('', ['content']), 0);
  const reused = textCounter(['text']);
  t.same(['{"text":"abc"}', '{"text":"de"}', '{"text":"abc"}'].map(reused), [3, 2, 3], 'one counter serves frame after frame');
});

t.test('jsonKey: true exactly when the quoted name is in the text', async (t) => {
  const usage = jsonKey('usage');
  t.equal(usage('{"choices":[],"usage":{"prompt_tokens":9}}'), true);
  t.equal(usage('{"usage":null}'), true);
  t.equal(usage('{"total_usage":1}'), false, 'a longer key ending in the name is another key');
  t.equal(usage('{"usages":1}'), false, 'a longer key starting with it too');
  t.equal(usage('{"content":"usage"}'), true, 'a string of that value is found too (the scanners parse before trusting it)');
  t.equal(usage('{"content":"my usage\\"}'), false, 'the name then an escaped quote is not the quoted name');
  t.equal(usage(''), false);
  t.equal(jsonKey('usageMetadata')('{"usageMetadata":{}}'), true);
});

t.test('openai-chat: finish_reason "length" is incomplete, in a body and in a stream', async (t) => {
  const body = (finish: string) => ({ choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: What' }, finish_reason: finish }] });
  t.equal(openaiChat.incomplete?.(body('length')), true);
  for (const finish of ['stop', 'tool_calls', 'content_filter']) t.equal(openaiChat.incomplete?.(body(finish)), false, finish);
  t.equal(openaiChat.incomplete?.({ error: { message: 'x' } }), false, 'an error body');
  t.equal(openaiChat.incomplete?.(undefined), false);

  const chunk = (delta: object, finish: string | null, usage?: object) =>
    JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) });
  const stream = (finish: string) => sse([
    [undefined, chunk({ role: 'assistant', content: '' }, null)],
    [undefined, chunk({ content: 'Echo' }, null)],
    [undefined, chunk({ content: ':' }, null)],
    [undefined, chunk({}, finish)],
    [undefined, chunk({}, null, { prompt_tokens: 18, completion_tokens: 2, total_tokens: 20 })],
    [undefined, '[DONE]'],
  ]);
  const cut = scan(openaiChat, fakeCtx(), stream('length')).scanner;
  t.equal(cut.incomplete?.(), true);
  t.equal(cut.terminal(), true);
  t.strictSame(cut.streamed?.(), { chars: 5, outputFinal: true }, 'the usage chunk made the output count final');
  t.equal(scan(openaiChat, fakeCtx(), stream('stop')).scanner.incomplete?.(), false);
  t.equal(scan(openaiChat, fakeCtx(), sse([[undefined, chunk({ content: '"finish_reason":"length"' }, null)]])).scanner.incomplete?.(), false,
    'the words inside the text are not the field');

  const early = scan(openaiChat, fakeCtx(), sse([[undefined, chunk({ role: 'assistant', content: '' }, null)], [undefined, chunk({ content: 'Hello' }, null)]])).scanner;
  t.strictSame(early.streamed?.(), { chars: 5, outputFinal: false }, 'no usage yet: the count is not final');
  const tool = scan(openaiChat, fakeCtx(), sse([[undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: '{"input":' } }] }, null)]])).scanner;
  t.equal(tool.streamed?.().chars, 9, 'tool-call arguments are answer text too');
});

t.test('openai-responses: status "incomplete" in a body, response.incomplete in a stream', async (t) => {
  t.equal(openaiResponses.incomplete?.({ object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }), true);
  for (const status of ['completed', 'failed', 'in_progress']) t.equal(openaiResponses.incomplete?.({ object: 'response', status }), false, status);

  const usage = { input_tokens: 14, output_tokens: 3, total_tokens: 17 };
  const events = (terminal: string, status: string, named = true) => sse([
    ['response.created', { type: 'response.created', sequence_number: 0, response: { id: 'r1', status: 'in_progress', usage: null } }],
    ['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 1, delta: 'Echo', obfuscation: 'padding' }],
    ['response.function_call_arguments.delta', { type: 'response.function_call_arguments.delta', sequence_number: 2, delta: '{"a"' }],
    [terminal, { type: terminal, sequence_number: 3, response: { id: 'r1', status, usage } }],
  ].map(([event, data]) => [named ? event : undefined, data] as [string | undefined, unknown]));
  const cut = scan(openaiResponses, fakeCtx(), events('response.incomplete', 'incomplete')).scanner;
  t.equal(cut.incomplete?.(), true);
  t.strictSame(cut.streamed?.(), { chars: 8, outputFinal: true }, 'text and argument deltas, not the obfuscation padding');
  t.equal(scan(openaiResponses, fakeCtx(), events('response.completed', 'completed')).scanner.incomplete?.(), false);
  t.equal(scan(openaiResponses, fakeCtx(), events('response.done', 'incomplete')).scanner.incomplete?.(), true, 'a response.done whose status says incomplete');
  const unnamed = scan(openaiResponses, fakeCtx(), events('response.incomplete', 'incomplete', false)).scanner;
  t.strictSame([unnamed.incomplete?.(), unnamed.streamed?.()], [true, { chars: 8, outputFinal: true }], 'frames without event lines are read too');
  const early = scan(openaiResponses, fakeCtx(), sse([['response.output_text.delta', { type: 'response.output_text.delta', delta: 'Hi' }]])).scanner;
  t.strictSame(early.streamed?.(), { chars: 2, outputFinal: false });
});

t.test('anthropic-messages: stop_reason "max_tokens" in a body and in message_delta; message_start output is a placeholder', async (t) => {
  t.equal(anthropicMessages.incomplete?.({ type: 'message', stop_reason: 'max_tokens' }), true);
  for (const reason of ['end_turn', 'tool_use', 'stop_sequence', null]) t.equal(anthropicMessages.incomplete?.({ type: 'message', stop_reason: reason }), false, String(reason));

  const head: Array<[string, unknown]> = [
    ['message_start', { type: 'message_start', message: { id: 'm1', model: 'claude-haiku-4-5', usage: { input_tokens: 18, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['ping', { type: 'ping' }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Echo' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"x"' } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' } }],
  ];
  const tail = (reason: string): Array<[string, unknown]> => [
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 3 } }],
    ['message_stop', { type: 'message_stop' }],
  ];
  const early = scan(anthropicMessages, fakeCtx(), sse(head)).scanner;
  t.strictSame(early.streamed?.(), { chars: 11, outputFinal: false }, 'text, thinking and tool input, never the signature');
  t.equal(early.usage()?.input, 18, 'the prompt is known from message_start');
  const cut = scan(anthropicMessages, fakeCtx(), sse([...head, ...tail('max_tokens')])).scanner;
  t.equal(cut.incomplete?.(), true);
  t.strictSame(cut.streamed?.(), { chars: 11, outputFinal: true }, 'message_delta reported the output count');
  t.equal(scan(anthropicMessages, fakeCtx(), sse([...head, ...tail('end_turn')])).scanner.incomplete?.(), false);
  const unnamed = scan(anthropicMessages, fakeCtx(), sse([...head, ...tail('max_tokens')].map(([, d]) => [undefined, d]))).scanner;
  t.strictSame([unnamed.incomplete?.(), unnamed.streamed?.()], [true, { chars: 11, outputFinal: true }], 'frames without event lines');
});

t.test('gemini: finishReason "MAX_TOKENS" in a body, a JSON-array stream and an SSE stream', async (t) => {
  const chunk = (text: string, finish?: string, usage: object = { promptTokenCount: 8, totalTokenCount: 8 }) =>
    ({ candidates: [{ content: { parts: [{ text }], role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }], usageMetadata: usage });
  t.equal(gemini.incomplete?.(chunk('Echo', 'MAX_TOKENS')), true);
  t.equal(gemini.incomplete?.([chunk('Echo'), chunk(':', 'MAX_TOKENS')]), true, 'the chunks of a JSON-array stream');
  for (const finish of ['STOP', 'SAFETY', undefined]) t.equal(gemini.incomplete?.(chunk('Echo', finish)), false, String(finish));
  t.equal(gemini.incomplete?.({ error: { code: 500 } }), false);

  const frame = (value: object) => `data: ${JSON.stringify(value, null, 1).replace(/\n/g, '')}\r\n\r\n`;
  const head = frame(chunk('Echo')) + frame(chunk(':'));
  const early = scan(gemini, fakeCtx(), head).scanner;
  t.strictSame(early.streamed?.(), { chars: 5, outputFinal: false }, 'provisional usage only');
  t.equal(early.usage()?.input, 8, 'the prompt is known from the first chunk');
  const cut = scan(gemini, fakeCtx(), head + frame(chunk(' Hello', 'MAX_TOKENS', { promptTokenCount: 8, candidatesTokenCount: 3, totalTokenCount: 11 }))).scanner;
  t.equal(cut.incomplete?.(), true);
  t.strictSame(cut.streamed?.(), { chars: 11, outputFinal: true });
  t.equal(scan(gemini, fakeCtx(), head + frame(chunk('!', 'STOP'))).scanner.incomplete?.(), false);
});

t.test('openai-images: no output cap and no streamed text to count', async (t) => {
  t.equal(openaiImages.incomplete, undefined);
  t.equal(openaiImages.scanStream(fakeCtx()).streamed, undefined);
});
