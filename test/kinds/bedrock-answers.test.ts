// Bedrock's answers made Anthropic's, piece by piece: event-stream messages split anywhere, the invocation metrics as
// usage when the events lack it, exceptions inside the stream, a corrupt message, error bodies and their types.
import t from 'tap';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { anthropicErrorType, BedrockErrorBody, BedrockEventStream, bedrockDecoder } from '../../adapters/kinds/bedrock-answers.ts';
import { SseParser } from '../../adapters/shared/sse.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });
const chunk = (event: object) => Buffer.from(codec.encode({
  headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') },
  body: fromUtf8(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') })),
}));
const exception = (type: string, message: string) => Buffer.from(codec.encode({
  headers: { ':exception-type': str(type), ':content-type': str('application/json'), ':message-type': str('exception') },
  body: fromUtf8(JSON.stringify({ message })),
}));
const events = (text: string) => new SseParser().push(Buffer.from(text)).map((f) => ({ event: f.event, data: JSON.parse(f.data) }));

t.test('chunks split at every byte decode to the same Anthropic events', async (t) => {
  const body = Buffer.concat([
    chunk({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 7, output_tokens: 1 } } }),
    chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'héllo' } }),
    chunk({ type: 'content_block_stop', index: 0 }),
    chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }),
    chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 7, outputTokenCount: 3, invocationLatency: 5, firstByteLatency: 2 } }),
  ]);
  const d = new BedrockEventStream();
  let text = '';
  for (let i = 0; i < body.length; i++) text += d.push(body.subarray(i, i + 1));
  text += d.end();
  const got = events(text);
  t.same(got.map((e) => e.event), ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'], 'no usage added: the events had it');
  t.equal(got[2].data.delta.text, 'héllo');
  t.equal(d.contentType, 'text/event-stream; charset=utf-8');
});

t.test('the invocation metrics become the usage when the events lack it', async (t) => {
  const d = new BedrockEventStream();
  const text = d.push(Buffer.concat([
    chunk({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }),
    chunk({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null } }),
    chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 11, outputTokenCount: 22 } }),
  ]));
  const got = events(text);
  t.same(got.map((e) => e.event), ['message_start', 'message_delta', 'message_delta', 'message_stop']);
  t.same(got[2].data, { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { input_tokens: 11, output_tokens: 22 } }, 'the stop reason kept, the metrics as usage');
});

t.test('an exception in the stream is an Anthropic error event; a corrupt message throws', async (t) => {
  const d = new BedrockEventStream();
  const got = events(d.push(Buffer.concat([chunk({ type: 'ping' }), exception('throttlingException', 'Too many tokens')])));
  t.same(got.at(-1), { event: 'error', data: { type: 'error', error: { type: 'rate_limit_error', message: 'Too many tokens' } } });
  const bad = chunk({ type: 'ping' });
  bad[bad.length - 1] ^= 0xff;
  t.throws(() => new BedrockEventStream().push(bad), 'a CRC mismatch');
  t.throws(() => { const e = new BedrockEventStream(); e.push(chunk({ type: 'ping' }).subarray(0, 20)); e.end(); }, /inside a message/);
});

t.test('error bodies take Anthropic\'s envelope and type', async (t) => {
  const e = new BedrockErrorBody(429, 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/');
  e.push(Buffer.from('{"message":"Too many requests, please wait before trying again."}'));
  t.same(JSON.parse(e.end()), { type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests, please wait before trying again.' } });
  t.equal(anthropicErrorType('ValidationException', 400), 'invalid_request_error');
  t.equal(anthropicErrorType('InvalidSignatureException', 403), 'authentication_error');
  t.equal(anthropicErrorType(undefined, 503), 'overloaded_error');
  t.equal(anthropicErrorType(undefined, 500), 'api_error');
  t.ok(bedrockDecoder(200, { 'content-type': 'application/vnd.amazon.eventstream' }) instanceof BedrockEventStream);
  t.equal(bedrockDecoder(200, { 'content-type': 'application/json' }), undefined, 'a whole answer is Anthropic\'s already');
});
