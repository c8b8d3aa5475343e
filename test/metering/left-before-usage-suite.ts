// Issue 38, item 3: a client that reads the first chunks of an OpenAI Chat or Responses stream (which report usage only at
// their end) and leaves must still pay for its prompt. The gateway reads the upstream on for its usage (proxy
// usage_drain_ms / usage_drain_bytes) and bills the real figures; when they never come (the upstream cut its stream, or
// never reports usage) it bills count_tokens' estimate of the prompt and the output streamed, marked `estimated`. The
// key's concurrency slot is held while the upstream still works for the request and given back as it settles. Through
// the real server, on the store given (left-before-usage*.test.ts: the file store and Redis).
import type { Test } from 'tap';
import { withGateway } from '../helpers/gateway.ts';
import { bearer, post } from '../helpers/http.ts';
import { slowChatStream, startUpstream } from '../helpers/upstream.ts';
import { startSimulator } from '../../simulator/server.ts';
import { admin, eventually } from '../admin/helpers.ts';

export const ALICE = 'sk-alice-0001';
const SOLO = 'sk-solo-0002';
// "Hello there, wonderful world" is 5 tokens to the simulator: prompt (3 + 5) + 3 = 11; the reply "Echo: Hello there,
// wonderful world" is 7 tokens, streamed one a frame.
export const TEXT = 'Hello there, wonderful world';
export const PROMPT = 11;
export const REPLY = 7;
// 12 000 characters of prompt: count_tokens' estimate is 12 000 / 4 = 3 000 tokens.
const LONG = 'lorem '.repeat(2000);
const LONG_ESTIMATE = 3000;
// USD per 1M tokens.
const PRICE = { input: 1000, output: 2000 };
const usd = (input: number, output: number) => (input * PRICE.input + output * PRICE.output) / 1e6;

export const config = (store: string, upstream: string, chatOnly: string) => `
server: { host: 127.0.0.1, port: 0 }
${store}
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  sim: { simulator: true }
  silent: { base_url: "${upstream}", format: openai-chat }
  chat-only: { base_url: "${chatOnly}", format: openai-chat, forward_headers: [x-simulator-chunk-delay-ms] }
groups:
  main:
    platform: sim
    models: [gpt-4o-mini, "gpt-5*"]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
  silent:
    platform: silent
    models: [gpt-4o-mini]
    accounts:
      - { id: silent-1, credential: silent-credential-1 }
  bridged:
    platform: chat-only
    models: [gpt-4o-mini]
    accounts:
      - { id: chat-1, credential: chat-credential-1 }
keys:
  - { id: alice, key: ${ALICE}, group: main }
  - { id: solo, key: ${SOLO}, group: main, limits: { concurrency: 1 } }
  - { id: quiet, key: sk-quiet-0003, group: silent }
  - { id: bridge, key: sk-bridge-0004, group: bridged }
pricing:
  gpt-4o-mini: { input: ${PRICE.input}, output: ${PRICE.output} }
  "gpt-5*": { input: ${PRICE.input}, output: ${PRICE.output} }
pipelines:
  extends: default
  add:
    # An upstream that never reports usage, read on for at most 300 ms.
    silent: [auth, group-check, model-allowlist, rate-limit, metering, { proxy: { usage_drain_ms: 300 } }]
routes:
  extends: default
  add:
    - { method: POST, path: /silent/v1/chat/completions, format: openai-chat, pipeline: silent, upstream_path: /v1/chat/completions }
`;

export const chat = (content: string) => ({ path: '/v1/chat/completions', body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content }] } });
const responses = (input: string) => ({ path: '/v1/responses', body: { model: 'gpt-5', stream: true, input } });

export interface Record_ { client_request_id?: string; ending: string; status: number; stream: boolean; input_tokens: number; output_tokens: number; cost: number; estimated?: boolean }

export async function leftBeforeUsage(t: Test, store: string) {
  // A chat upstream that streams 10 chunks 200 ms apart and never a usage chunk.
  const silent = await startUpstream(t, slowChatStream(10, 200));
  // A chat-only upstream: an Anthropic client's stream is translated, and its usage still comes only at the end.
  const chatOnly = await startSimulator();
  t.teardown(() => chatOnly.close());
  const gateway = await withGateway(t, config(store, silent.url, chatOnly.url));

  /** Streams the request, reads until the first piece of the answer arrived, and leaves. */
  async function leave(t: Test, id: string, path: string, body: unknown, key = ALICE, headers: Record<string, string> = {}): Promise<string> {
    const controller = new AbortController();
    const res = await post(gateway.url + path, body, { ...bearer(key), 'x-request-id': id, 'x-simulator-chunk-delay-ms': '150', ...headers }, controller.signal);
    t.equal(res.status, 200, `${id}: streaming`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!/Echo|w0/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    return text;
  }
  const recordOf = async (key: string, id: string): Promise<Record_> => {
    const found = await eventually(() => admin(gateway, 'GET', `/admin/usage?key=${key}`), (r) => r.body.records.some((x: Record_) => x.client_request_id === id), 10_000);
    return found.body.records.find((x: Record_) => x.client_request_id === id);
  };

  t.test('a client that leaves before the usage chunk is billed the upstream\'s own usage, read on after it left', async (t) => {
    const translated = { path: '/v1/messages', body: { model: 'gpt-4o-mini', max_tokens: 100, stream: true, messages: [{ role: 'user', content: TEXT }] } };
    for (const [id, c] of [['left-chat', chat(TEXT)], ['left-responses', responses(TEXT)], ['left-translated', translated]] as const) {
      const seen = await leave(t, id, c.path, c.body, id === 'left-translated' ? 'sk-bridge-0004' : ALICE);
      t.notMatch(seen, 'wonderful', `${id}: the client left before the answer was whole`);
      const r = await recordOf(id === 'left-translated' ? 'bridge' : 'alice', id);
      t.match(r, { ending: 'disconnected', status: 200, stream: true, input_tokens: PROMPT, output_tokens: REPLY }, `${id}: the prompt and the whole answer, as the upstream counted them`);
      t.equal(r.estimated, undefined, `${id}: not an estimate`);
      t.ok(Math.abs(r.cost - usd(PROMPT, REPLY)) < 1e-9, `${id}: cost ${r.cost}`);
    }
  });

  t.test('the upstream cuts its stream before its usage: the prompt as count_tokens estimates it, marked estimated', async (t) => {
    for (const [id, c] of [['cut-chat', chat(LONG)], ['cut-responses', responses(LONG)]] as const) {
      await leave(t, id, c.path, c.body, ALICE, { 'x-simulator-fault': 'truncate' });
      const r = await recordOf('alice', id);
      // Two content frames came before the cut: "Echo" and ":", 5 characters, 2 tokens at 4 characters a token.
      t.match(r, { ending: 'disconnected', input_tokens: LONG_ESTIMATE, output_tokens: 2, estimated: true }, `${id}: estimated, and shown so in /admin/usage`);
      t.ok(Math.abs(r.cost - usd(LONG_ESTIMATE, 2)) < 1e-9, `${id}: cost ${r.cost}`);
    }
  });

  t.test('an upstream that never reports usage is read on only until usage_drain_ms, then the prompt is estimated', async (t) => {
    const before = silent.exchanges.length;
    const start = Date.now();
    await leave(t, 'silent-chat', '/silent/v1/chat/completions', chat(LONG).body, 'sk-quiet-0003');
    const r = await recordOf('quiet', 'silent-chat');
    const exchange = silent.exchanges[before];
    await exchange.closed;
    t.equal(exchange.finished, false, 'the upstream was hung up on before its 2 s stream ended');
    t.ok(exchange.closedAt! - start < 1500, `closed ${exchange.closedAt! - start} ms after the request began`);
    t.match(r, { ending: 'disconnected', input_tokens: LONG_ESTIMATE, estimated: true });
    t.ok(r.output_tokens >= 1 && r.output_tokens <= 3, `the "w0 w1 " streamed (${r.output_tokens} tokens)`);
  });

  t.test('the key\'s concurrency slot is held while the upstream still works for the request, and given back as it settles', async (t) => {
    await leave(t, 'solo-left', chat(TEXT).path, chat(TEXT).body, SOLO);
    const busy = await post(`${gateway.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, bearer(SOLO));
    t.equal(busy.status, 429, 'the stream read on still counts against the key\'s concurrency');
    t.equal(busy.headers.get('x-gateway-limit'), 'concurrency');
    await busy.arrayBuffer();
    t.match(await recordOf('solo', 'solo-left'), { input_tokens: PROMPT, output_tokens: REPLY });
    const next = await post(`${gateway.url}/v1/chat/completions`, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, bearer(SOLO));
    t.equal(next.status, 200, 'admitted as soon as the request settled');
    await next.arrayBuffer();
  });
}
