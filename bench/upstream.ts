// Fast static upstream for the benchmark: a fixed OpenAI chat completion, so every target relays the same bytes.
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
const notFound = Buffer.from('{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}');

const server = http.createServer((req, res) => {
  // Drain the body first, as a real upstream must, so proxies pay for sending it.
  req.resume();
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/v1/chat/completions') res.writeHead(200, headers).end(completion);
    else res.writeHead(404, { 'content-type': 'application/json' }).end(notFound);
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
