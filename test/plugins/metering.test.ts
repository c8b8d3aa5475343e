// Stage `metering`: the disconnect policy (observed usage, estimated output and prompt, none), endings, and — through a
// gateway — that a client leaving mid-stream is settled with what the stream showed, in every streaming format (read on
// for its usage where the prompt was not yet reported).
import t from 'tap';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { metering } from '../../plugins/metering/index.ts';
import { openaiChat } from '../../adapters/openai-chat/index.ts';
import { MemoryStore } from '../../core/store/memory/store.ts';
import { ModelNames } from '../../core/model-names.ts';
import type { Env, Outcome, StreamedText } from '../../core/types.ts';
import type { Usage } from '../../core/usage.ts';
import { withLoggedGateway, writeConfig } from '../helpers/gateway.ts';
import { endingCtx, runStage } from '../helpers/stage-ctx.ts';
import { logLine } from '../helpers/e2e.ts';
import { admin, eventually } from '../admin/helpers.ts';

const silent = pino({ level: 'silent' });
const PRICE = { input: 1, output: 2 }; // USD per 1M tokens

/** The request of the fake context: 40 characters of prompt, count_tokens' estimate of which is 10 tokens. */
const REQUEST = { model: 'm', stream: true, messages: [{ role: 'user', content: 'x'.repeat(40) }] };
/** What the stage reads of its env, with model `m` priced at `price`. */
function stageEnv(store: MemoryStore, price: Record<string, number>): Env {
  const config = { groups: {}, keys: [], pricing: { m: price } };
  return { store, config, models: new ModelNames(config), metrics: new Registry(), log: silent } as unknown as Env;
}

/** Runs the metering stage once around a fake proxy that leaves `outcome`, `usage` and `streamed` on ctx; returns the record. */
async function meter(options: Record<string, unknown>, seen: { outcome?: Outcome; usage?: Usage; streamed?: StreamedText; status?: number }) {
  const store = new MemoryStore();
  const env = stageEnv(store, PRICE);
  const stage = metering.create({ price_by: 'upstream', on_disconnect: 'observed', chars_per_token: 4, ...options }, env, { laterTakes: () => false });
  const ctx = endingCtx({
    id: 'req-1', key: { id: 'k', limits: {} }, group: { name: 'g', rate_multiplier: 1 }, platform: { name: 'sim' }, account: { id: 'a' },
    route: { path: '/v1/chat/completions' }, path: '/v1/chat/completions', search: '', format: openaiChat, model: 'm', upstreamModel: 'm',
    stream: true, timings: { start: performance.now() }, res: { statusCode: seen.status ?? 200 }, log: silent, get: () => undefined,
    json: async () => REQUEST, body: async () => Buffer.from(JSON.stringify(REQUEST)),
  });
  await runStage(stage, ctx, async () => { if (seen.outcome) ctx.end(seen.outcome); ctx.usage = seen.usage; ctx.streamed = seen.streamed; });
  const { records } = await store.records({ limit: 10 });
  if (records.length !== 1) throw new Error(`expected one record, found ${records.length}`);
  return records[0];
}

const u = (input: number, output: number): Usage => ({ input, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 });
const costOf = (input: number, output: number) => (input * PRICE.input + output * PRICE.output) / 1e6;

t.test('disconnected, output not yet counted: the prompt as reported plus the relayed text at 4 characters a token', async (t) => {
  const r = await meter({}, { outcome: 'disconnected', usage: u(18, 1), streamed: { chars: 11, outputFinal: false } });
  t.match(r, { ending: 'disconnected', input_tokens: 18, output_tokens: 3, estimated: true });
  t.ok(Math.abs(r.cost - costOf(18, 3)) < 1e-12, 'the estimate is priced like any output');
  const none = await meter({}, { outcome: 'disconnected', streamed: { chars: 9, outputFinal: false } });
  t.match(none, { input_tokens: 10, output_tokens: 3, estimated: true }, 'no usage reported at all: the prompt as count_tokens estimates it too');
  t.ok(Math.abs(none.cost - costOf(10, 3)) < 1e-12, 'and priced');
  const ratio = await meter({ chars_per_token: 3 }, { outcome: 'disconnected', usage: u(18, 1), streamed: { chars: 11, outputFinal: false } });
  t.equal(ratio.output_tokens, 4, 'chars_per_token is the divisor, rounded up');
});

t.test('disconnected with a final output count, or a count above the estimate: the upstream\'s number stands', async (t) => {
  const final = await meter({}, { outcome: 'disconnected', usage: u(18, 2), streamed: { chars: 40, outputFinal: true } });
  t.match(final, { input_tokens: 18, output_tokens: 2 });
  t.notOk('estimated' in final, 'not marked as an estimate');
  const placeholder = await meter({}, { outcome: 'disconnected', usage: u(18, 1), streamed: { chars: 3, outputFinal: false } });
  t.equal(placeholder.output_tokens, 1);
  t.notOk('estimated' in placeholder);
  const body = await meter({}, { outcome: 'disconnected' });
  t.match(body, { input_tokens: 0, output_tokens: 0, cost: 0 }, 'a body the client left before it was read: nothing observed');
});

t.test('on_disconnect none bills nothing; other endings never estimate', async (t) => {
  const none = await meter({ on_disconnect: 'none' }, { outcome: 'disconnected', usage: u(18, 1), streamed: { chars: 40, outputFinal: false } });
  t.match(none, { ending: 'disconnected', input_tokens: 0, output_tokens: 0, cost: 0 });
  t.notOk('estimated' in none);
  for (const outcome of ['missing-terminal', 'failed'] as const) {
    const r = await meter({}, { outcome, usage: u(18, 1), streamed: { chars: 40, outputFinal: false } });
    t.match(r, { ending: outcome, input_tokens: 18, output_tokens: 1 }, `${outcome}: what the upstream reported`);
    t.notOk('estimated' in r);
  }
  const cut = await meter({}, { outcome: 'incomplete', usage: u(18, 3), streamed: { chars: 10, outputFinal: true } });
  t.match(cut, { ending: 'incomplete', input_tokens: 18, output_tokens: 3 });
});

t.test('cache writes: 1-hour ones at cache_write_1h, 5-minute ones at cache_write, falling back in turn', async (t) => {
  const usage: Usage = { input: 1000 + 300 + 200, cacheRead: 0, cacheWrite: 500, cacheWrite1h: 200, output: 10, reasoning: 0 };
  const priced = async (price: Record<string, number>) => {
    const store = new MemoryStore();
    const env = stageEnv(store, price);
    const stage = metering.create({ price_by: 'upstream', on_disconnect: 'observed', chars_per_token: 4 }, env, { laterTakes: () => false });
    const ctx = endingCtx({
      id: 'req-1h', key: { id: 'k', limits: {} }, group: { name: 'g', rate_multiplier: 1 }, route: { path: '/v1/messages' },
      model: 'm', upstreamModel: 'm', stream: false, timings: { start: performance.now() }, res: { statusCode: 200 }, log: silent, get: () => undefined,
    });
    await runStage(stage, ctx, async () => { ctx.end('completed'); ctx.usage = usage; });
    return (await store.records({ limit: 1 })).records[0];
  };
  const full = await priced({ input: 3, output: 15, cache_write: 3.75, cache_write_1h: 6 });
  t.match(full, { input_tokens: 1000, cache_write_tokens: 500, cache_write_1h_tokens: 200, output_tokens: 10 });
  t.ok(Math.abs(full.cost - (1000 * 3 + 300 * 3.75 + 200 * 6 + 10 * 15) / 1e6) < 1e-12, `cost ${full.cost}`);
  const no1h = await priced({ input: 3, output: 15, cache_write: 3.75 });
  t.ok(Math.abs(no1h.cost - (1000 * 3 + 500 * 3.75 + 10 * 15) / 1e6) < 1e-12, 'no cache_write_1h: all writes at cache_write');
  const plain = await priced({ input: 3, output: 15 });
  t.ok(Math.abs(plain.cost - (1500 * 3 + 10 * 15) / 1e6) < 1e-12, 'no cache prices: writes at the input price');
});

// ---- through a gateway: the client leaves mid-stream in every streaming format ----

const config = writeConfig(`
server: { host: 127.0.0.1, port: 0 }
admin: { token: admin-secret-token-0123456789abcdef }
platforms:
  sim: { simulator: true }
groups:
  main:
    platform: sim
    models: ["*"]
    accounts:
      - { id: sim-1, credential: upstream-credential-1 }
keys:
  - { id: alice, key: sk-alice-0001, group: main }
pricing:
  "*": { input: 1, output: 2 }
`);
const { gateway, requests } = await withLoggedGateway(t, config);

// "Hello there, wonderful world" is 5 tokens; the reply "Echo: Hello there, wonderful world" streams a token a frame:
// "Echo", ":", " Hello", " there", ... so after 4 content frames the client has 17 characters: ceil(17 / 4) = 5 tokens.
const TEXT = 'Hello there, wonderful world';
const json = { 'content-type': 'application/json', 'x-simulator-chunk-delay-ms': '200' };
const cases = [
  {
    format: 'anthropic-messages', path: '/v1/messages', marker: '"text_delta"',
    headers: { ...json, 'x-api-key': 'sk-alice-0001', 'anthropic-version': '2023-06-01' },
    body: { model: 'claude-haiku-4-5', max_tokens: 100, stream: true, system: 'Be brief.', messages: [{ role: 'user', content: TEXT }] },
    // message_start already said input_tokens: (3 + 3) + (3 + 5) + 3 = 17 ("Be brief." is 3 tokens).
    input: 17,
  },
  {
    format: 'gemini', path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', marker: '"text"',
    headers: { ...json, 'x-goog-api-key': 'sk-alice-0001' },
    body: { contents: [{ role: 'user', parts: [{ text: TEXT }] }] },
    // Every chunk carries promptTokenCount: (3 + 5) + 3 = 11.
    input: 11,
  },
  {
    format: 'openai-chat', path: '/v1/chat/completions', marker: '"content":"',
    headers: { ...json, authorization: 'Bearer sk-alice-0001' },
    body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: TEXT }] },
    // Chat reports usage only in its last chunk: the stream is read on after the client left, for the whole answer's usage.
    input: 11, drained: true,
    skip: 1, // the role chunk carries "content":"" before any text
  },
  {
    format: 'openai-responses', path: '/v1/responses', marker: 'response.output_text.delta',
    headers: { ...json, authorization: 'Bearer sk-alice-0001' },
    body: { model: 'gpt-5', stream: true, input: TEXT },
    input: 11, drained: true, // usage arrives only with the terminal event: read on for it
    perFrame: 2, // the event name appears on the event line and in the data
  },
];

/** Reads the stream until `frames` content frames arrived, then leaves; returns what the client had received. */
async function leaveAfter(path: string, headers: Record<string, string>, body: unknown, marker: string, frames: number, id: string): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(gateway.url + path, { method: 'POST', headers: { ...headers, 'x-request-id': id }, body: JSON.stringify(body), signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (text.split(marker).length - 1 < frames) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => {});
  return text;
}

t.test('a client leaving mid-stream: settled with the prompt already reported and the relayed text as output, or with the usage read on for', async (t) => {
  // One at a time: concurrent aborted fetches leave unused keep-alive connections that hold the gateway's close for 10 s.
  const results = [];
  for (const c of cases) {
    const id = `meter-leave-${c.format}`;
    results.push({ c, id, seen: await leaveAfter(c.path, c.headers, c.body, c.marker, (4 + (c.skip ?? 0)) * (c.perFrame ?? 1), id) });
  }
  for (const { c, id, seen } of results) {
    t.notMatch(seen, 'wonderful', `${c.format}: the client left before the whole answer`);
    const found = await eventually(() => admin(gateway, 'GET', `/admin/usage?key=alice`), (r) => r.body.records.some((x: any) => x.client_request_id === id));
    const record = found.body.records.find((x: any) => x.client_request_id === id);
    // Read on: the whole answer "Echo: Hello there, wonderful world" is 7 tokens, the upstream's own count.
    const output = c.drained ? 7 : 5;
    t.match(record, { ending: 'disconnected', status: 200, stream: true, input_tokens: c.input, output_tokens: output }, c.format);
    t.equal(record.estimated, c.drained ? undefined : true, `${c.format}: ${c.drained ? 'the upstream\'s usage' : 'estimated'}`);
    t.ok(Math.abs(record.cost - (c.input * 1 + output * 2) / 1e6) < 1e-12, `${c.format}: priced`);
    const line = await logLine(requests, id);
    t.equal(line.outcome, 'disconnected', `${c.format}: the ending was not overwritten when the upstream closed afterwards`);
  }
});

t.test('the whole answer read: the upstream\'s own numbers, never an estimate', async (t) => {
  const id = 'meter-whole';
  const res = await fetch(gateway.url + '/v1/messages', { method: 'POST', headers: { ...cases[0].headers, 'x-simulator-chunk-delay-ms': '0', 'x-request-id': id }, body: JSON.stringify(cases[0].body) });
  await res.text();
  const found = await eventually(() => admin(gateway, 'GET', `/admin/usage?key=alice`), (r) => r.body.records.some((x: any) => x.client_request_id === id));
  const record = found.body.records.find((x: any) => x.client_request_id === id);
  t.match(record, { ending: 'completed', input_tokens: 17, output_tokens: 7 });
  t.notOk('estimated' in record);
});

t.test('a Gemini stream as one JSON array (no alt=sse): cut by the cap is incomplete; a client leaving keeps the prompt count', async (t) => {
  const path = '/v1beta/models/gemini-2.5-flash:streamGenerateContent';
  const headers = { 'content-type': 'application/json', 'x-goog-api-key': 'sk-alice-0001' };
  const capped = await fetch(gateway.url + path, {
    method: 'POST', headers: { ...headers, 'x-request-id': 'meter-array-cap' },
    body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: TEXT }] }], generationConfig: { maxOutputTokens: 3 } }),
  });
  t.match(capped.headers.get('content-type'), /^application\/json/);
  t.equal((JSON.parse(await capped.text()) as any[]).at(-1).candidates[0].finishReason, 'MAX_TOKENS');

  const id = 'meter-array-leave';
  const seen = await leaveAfter(path, cases[1].headers, cases[1].body, '"text"', 4, id);
  t.notMatch(seen, 'wonderful');
  const found = await eventually(() => admin(gateway, 'GET', '/admin/usage?key=alice'),
    (r) => ['meter-array-cap', id].every((x) => r.body.records.some((y: any) => y.client_request_id === x)));
  const record = (x: string) => found.body.records.find((y: any) => y.client_request_id === x);
  t.match(record('meter-array-cap'), { ending: 'incomplete', input_tokens: 11, output_tokens: 3 });
  // The array so far, closed after its last whole element, names the prompt; its text is not counted (no SSE scanner here).
  t.match(record(id), { ending: 'disconnected', input_tokens: 11, output_tokens: 0 });
  t.notOk('estimated' in record(id));
  t.equal((await logLine(requests, id)).outcome, 'disconnected', 'not turned into missing-terminal when the upstream closed');
});
