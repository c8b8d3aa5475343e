// The bridge end to end, for every pair of a client format and an upstream format that differ (twelve, on groups whose
// simulator platforms each speak one format, strictly): text whole and streamed in the client's own grammar, the
// upstream's own usage in the ledger, upstream errors in the client's envelope, a stream failing or cut mid-way ending
// with the client's own error event, token counts, and what reaches the upstream (its own path, no client headers).
import t from 'tap';
import { bridgeGateway, MODELS, UPSTREAMS, type UpstreamFormat } from './bridge-config.ts';
import { ledgerRecord, lastRequest, upstreamUsage } from './sdk-helpers.ts';
import { countBody, errorType, send, streamRead, textBody, wholeText, type ClientFormat } from './bridge-clients.ts';

const gw = await bridgeGateway(t);
const PAIRS = UPSTREAMS.flatMap((client) => UPSTREAMS.filter((up) => up !== client).map((up) => [client, up] as const));
const PROMPT = 'Hello there, how are you today?';

const UPSTREAM_PATH: Record<UpstreamFormat, RegExp> = {
  'openai-chat': /^\/v1\/chat\/completions$/,
  'openai-responses': /^\/v1\/responses$/,
  'anthropic-messages': /^\/v1\/messages$/,
  gemini: /^\/v1beta\/models\/[\w.-]+:(generateContent|streamGenerateContent\?alt=sse)$/,
};

for (const [client, up] of PAIRS) {
  t.test(`${client} → ${up}`, async (t) => {
    t.test('whole answer: the client\'s shape, the upstream\'s own usage in the ledger', async (t) => {
      const res = await send(gw.url, client, up, textBody(client, PROMPT, false), { headers: { 'anthropic-beta': 'x', 'openai-organization': 'org-x' } });
      t.equal(res.status, 200, res.text);
      const json = JSON.parse(res.text);
      t.match(wholeText(client, json), /^Echo: Hello there, how are you today\?/);
      if (client !== 'gemini') t.equal(json.model, MODELS[client], 'the client\'s model name');
      const sent = lastRequest(gw, up);
      t.match(sent.path, UPSTREAM_PATH[up], 'the upstream format\'s own path');
      t.notOk(sent.headers['anthropic-beta'] ?? sent.headers['openai-organization'], 'no client vendor header reaches another vendor');
      const rec = await ledgerRecord(gw, up, res.headers.get('x-request-id')!);
      const usage = await upstreamUsage(gw, up, sent);
      t.strictSame([rec.input_tokens, rec.output_tokens, rec.cache_read_tokens, rec.cache_write_tokens, rec.reasoning_tokens],
        [usage.input, usage.output, usage.cacheRead, usage.cacheWrite, usage.reasoning], 'ledger = upstream usage');
      t.equal(rec.ending, 'completed');
      t.ok(rec.input_tokens > 0 && rec.output_tokens > 0);
    });

    t.test('stream: the client\'s grammar to its terminal, usage metered', async (t) => {
      const res = await send(gw.url, client, up, textBody(client, PROMPT, true), { stream: true });
      t.equal(res.status, 200, res.text);
      t.match(res.headers.get('content-type'), /text\/event-stream/);
      const read = streamRead(client, res.text);
      t.match(read.text, /^Echo: Hello there, how are you today\?/);
      t.ok(read.terminal, 'clean terminal');
      t.notOk(read.error);
      const rec = await ledgerRecord(gw, up, res.headers.get('x-request-id')!);
      const usage = await upstreamUsage(gw, up, lastRequest(gw, up));
      t.strictSame([rec.input_tokens, rec.output_tokens], [usage.input, usage.output], 'ledger = upstream usage');
      t.equal(rec.ending, 'completed');
      t.equal(rec.stream, true);
    });

    t.test('an upstream 400 reaches the client in its own envelope, with the upstream\'s message', async (t) => {
      const res = await send(gw.url, client, up, textBody(client, PROMPT, false), { headers: { 'x-simulator-fault': 'status=400' } });
      t.equal(res.status, 400);
      const type = errorType(client, JSON.parse(res.text));
      t.equal(type, client === 'gemini' ? 'INVALID_ARGUMENT' : 'invalid_request_error', res.text);
    });

    t.test('an upstream 429 on every account: the client\'s rate-limit error', async (t) => {
      const res = await send(gw.url, client, up, textBody(client, PROMPT, false), { headers: { 'x-simulator-fault': 'status=429,retry-after-ms=1' } });
      t.equal(res.status, 429, res.text);
      t.ok(errorType(client, JSON.parse(res.text)), res.text);
    });

    t.test('a stream failing mid-way ends with the client\'s own error event, recorded failed', async (t) => {
      const res = await send(gw.url, client, up, textBody(client, PROMPT, true), { stream: true, headers: { 'x-simulator-fault': 'midstream-error' } });
      t.equal(res.status, 200);
      const read = streamRead(client, res.text);
      t.ok(read.error, 'error event');
      t.notOk(read.terminal, 'no clean finish');
      t.equal((await ledgerRecord(gw, up, res.headers.get('x-request-id')!)).ending, 'failed');
    });

    t.test('a stream cut without its terminal ends with an error event, recorded missing-terminal', async (t) => {
      const res = await send(gw.url, client, up, textBody(client, PROMPT, true), { stream: true, headers: { 'x-simulator-fault': 'truncate' } });
      t.equal(res.status, 200);
      const read = streamRead(client, res.text);
      t.ok(read.error, 'error event');
      t.notOk(read.terminal, 'no clean finish');
      t.equal((await ledgerRecord(gw, up, res.headers.get('x-request-id')!)).ending, 'missing-terminal');
    });

    if (client !== 'openai-chat') {
      t.test('count_tokens: the upstream\'s counter, or a local estimate marked as one', async (t) => {
        const res = await send(gw.url, client, up, countBody(client, PROMPT), { count: true });
        t.equal(res.status, 200, res.text);
        const json = JSON.parse(res.text);
        const count = json.input_tokens ?? json.totalTokens;
        t.ok(Number.isInteger(count) && count > 0, res.text);
        // A chat upstream has no counter: the gateway estimates, and says so; the others count themselves.
        t.equal(json.estimated === true, up === 'openai-chat', 'estimated only where no counter exists');
        if (up !== 'openai-chat') t.match(lastRequest(gw, up).path, /count_tokens|countTokens|input_tokens/, 'the upstream\'s own counter');
      });
    }
  });
}
