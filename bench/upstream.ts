// Fast static upstream for the benchmark: a fixed OpenAI chat completion, so every target relays the same bytes; and a
// fixed Anthropic message on /v1/messages, for the translated target (a chat client on an Anthropic-format group).
import http from 'node:http';

const completion = Buffer.from(JSON.stringify({
  id: 'chatcmpl-bench0123456789abcdefghijklmn',
  object: 'chat.completion',
  created: 1735689600,
  model: 'bench-model-2025-01-01',
  system_fingerprint: 'fp_bench01234',
  choices: [{
    index: 0,
    message: {
      role: 'assistant',
      content: 'Hello! How can I help you today?',
      refusal: null,
      annotations: [],
    },
    logprobs: null,
    finish_reason: 'stop',
  }],
  usage: {
    prompt_tokens: 9,
    completion_tokens: 9,
    total_tokens: 18,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
  service_tier: 'default',
}));

const headers = { 'content-type': 'application/json', 'content-length': String(completion.length) };

const message = Buffer.from(JSON.stringify({
  id: 'msg_bench0123456789abcdefghij', type: 'message', role: 'assistant', model: 'bench-model-2025-01-01',
  content: [{ type: 'text', text: 'Hello! How can I help you today?' }], stop_reason: 'end_turn', stop_sequence: null,
  usage: { input_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9, service_tier: 'standard' },
}));
const messageHeaders = { 'content-type': 'application/json', 'content-length': String(message.length) };
const notFound = Buffer.from('{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');

// A streamed answer (`"stream":true` in the request): STREAM_CHUNKS content chunks STREAM_DELAY_MS apart (about a
// second in all, as a model would), then the usage chunk and [DONE], so many streams are in flight at once.
const STREAM_CHUNKS = 20;
const STREAM_DELAY_MS = 50;
const sseHeaders = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const frame = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage: unknown = undefined) => frame({
  id: 'chatcmpl-bench0123456789abcdefghijklmn', object: 'chat.completion.chunk', created: 1735689600, model: 'bench-model-2025-01-01',
  choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(usage ? { usage } : {}),
});

function stream(res: http.ServerResponse): void {
  res.writeHead(200, sseHeaders).write(chunk({ role: 'assistant', content: '' }));
  let sent = 0;
  const timer = setInterval(() => {
    if (++sent <= STREAM_CHUNKS) { res.write(chunk({ content: ' word' })); return; }
    clearInterval(timer);
    res.end(chunk({}, 'stop') + chunk({}, null, { prompt_tokens: 9, completion_tokens: STREAM_CHUNKS, total_tokens: 9 + STREAM_CHUNKS }) + 'data: [DONE]\n\n');
  }, STREAM_DELAY_MS);
  res.once('close', () => clearInterval(timer));
}

const server = http.createServer((req, res) => {
  // Read the body first, as a real upstream must, so proxies pay for sending it.
  let streamed = false;
  req.on('data', (c: Buffer) => { if (c.includes('"stream":true')) streamed = true; });
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/messages' && !streamed) res.writeHead(200, messageHeaders).end(message);
    else if (req.method !== 'POST' || req.url !== '/v1/chat/completions') res.writeHead(404, { 'content-type': 'application/json' }).end(notFound);
    else if (streamed) stream(res);
    else res.writeHead(200, headers).end(completion);
  });
});
// Longer than any pause between targets, so pooled proxy sockets are not closed under them.
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${port}\n`);
});

// The parent holds our stdin; when it goes away, so do we.
process.stdin.on('end', () => process.exit(0)).resume();
